"""Vocabulary of the synthetic web: words per topic, shared general words, boilerplate.

Topics overlap on purpose (``salt`` is chemistry and cooking, ``pitch`` is football, jazz and
sailing, ``bond`` is chemistry and finance …) and every page is mostly general words, so a topic
is found from the balance of its content words, not from one give-away word or a banner.
"""

from __future__ import annotations


def _w(text: str) -> list[str]:
    return text.split()


TOPICS: dict[str, dict[str, list[str]]] = {
    "birds": {
        "keywords": ["birds", "nest", "feathers"],
        "words": _w(
            "bird birds nest nests feather feathers wing wings beak egg eggs hatch plumage "
            "songbird sparrow warbler falcon hawk eagle owl heron migration migrate flock perch "
            "raptor talon chick fledgling ornithology birdwatching finch robin gull plover wader "
            "scale song crest moult"
        ),
    },
    "astronomy": {
        "keywords": ["astronomy", "telescope", "galaxy"],
        "words": _w(
            "star stars planet planets orbit telescope galaxy galaxies nebula comet asteroid "
            "moon lunar solar eclipse constellation cosmic universe supernova pulsar quasar redshift "
            "observatory astronomer light year gravity spectrum crater meteor satellite dwarf "
            "cluster scale magnitude"
        ),
    },
    "chemistry": {
        "keywords": ["chemistry", "molecule", "reaction"],
        "words": _w(
            "atom atoms molecule molecules reaction reactions acid base salt bond bonds "
            "electron proton isotope element compound oxide catalyst solvent solution titration "
            "valence ion ions polymer crystal oxidation reduction chemist laboratory flask reagent "
            "charge spectrum"
        ),
    },
    "football": {
        "keywords": ["football", "goal", "league"],
        "words": _w(
            "football goal goals striker midfielder defender goalkeeper league match "
            "referee penalty offside pitch stadium season transfer tackle corner kick header "
            "tournament cup fixture supporters coach manager squad dribble wing star captain "
            "derby"
        ),
    },
    "cooking": {
        "keywords": ["cooking", "recipe", "kitchen"],
        "words": _w(
            "recipe recipes kitchen oven bake baking roast simmer boil sauce flour butter "
            "garlic onion pepper salt sugar dough pastry knife pan skillet dish dishes chef cuisine "
            "marinade braise seasoning dessert bread stock bass"
        ),
    },
    "jazz": {
        "keywords": ["jazz", "saxophone", "improvisation"],
        "words": _w(
            "jazz saxophone trumpet trombone piano bass drummer swing bebop blues chord "
            "chords improvisation improvise solo quartet quintet ensemble rhythm melody harmony "
            "tempo record album standard pitch scale band club gig riff"
        ),
    },
    "sailing": {
        "keywords": ["sailing", "yacht", "regatta"],
        "words": _w(
            "sail sails sailing yacht yachts boat boats hull keel mast rudder deck anchor "
            "harbour harbor regatta crew helm tack jibe wind knots tide mooring dinghy catamaran "
            "navigation chart starboard port pitch"
        ),
    },
    "finance": {
        "keywords": ["finance", "investment", "stocks"],
        "words": _w(
            "stock stocks bond bonds investor investment portfolio dividend interest rate "
            "rates market markets equity asset assets fund funds inflation credit loan mortgage "
            "banking bank broker yield hedge charge capital nest"
        ),
    },
}

GENERAL = _w(
    "the of and to in a is that for it as was with be by on not he this are or his from at which "
    "but have an they you were her she there been one all we their has would when if so no what "
    "up out them about who some more could into time other than then its also only new these two "
    "may first any like now my such make over our even most made after way many where much well "
    "back through years good before long people see use same work three last world life part "
    "place while found still between under never day great old year home small large number "
    "group city early late history local often however during several around known called "
    "although important common best example another members local popular usually public"
)

MISC_WORDS = _w(
    "news weather traffic council election celebrity fashion shopping holiday travel hotel "
    "parking insurance phone broadband discount offer weekend festival lottery horoscope "
    "gossip review gadget mobile download video photo gallery event ticket sale crossword "
    "puzzle quiz property rental job jobs career school community charity volunteer"
)

AD_LINES = [
    "Save up to 70% on selected items this week only.",
    "Compare cheap car insurance quotes in minutes.",
    "Lose weight fast with this one simple trick.",
    "Get faster broadband today: switch and save.",
    "Hot singles near you are waiting.",
    "Free shipping on all orders over twenty pounds.",
]

FOOTER = (
    "Copyright 2024 The Example Network. All rights reserved. Content is provided for "
    "information only and may change without notice. By using this site you agree to our "
    "terms of use and privacy policy. Cookies help us deliver our services."
)

NAV = [
    ("Home", "/"),
    ("About", "/about.html"),
    ("Contact", "/contact.html"),
    ("Archive", "/archive.html"),
]

SITE_NAMES = [
    "The Daily Almanac",
    "Open Encyclopedia",
    "Hobby Hub",
    "Knowledge Base",
    "Weekend Reader",
    "Field Notes",
    "City Portal",
    "Common Ground",
]

ROBOTS = "User-agent: *\nDisallow: /private/\n"
