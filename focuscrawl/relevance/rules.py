"""Relevance rules as data: where a term occurs decides how much it counts.

Edit these tables, not the code that reads them. A model file stores the weights it was
trained with, so a saved model keeps scoring pages the way it was trained even if these change.
"""

from __future__ import annotations

#: Weight of one occurrence of a term, by where it occurs in the partitioned page.
#: ``text`` / ``link`` / ``noise`` are block kinds (:class:`focuscrawl.blocks.model.Block`);
#: ``anchor`` is added on top of the block weight for the anchor text of non-noise links.
FIELD_WEIGHTS: dict[str, float] = {
    "title": 3.0,
    "heading": 2.0,
    "anchor": 0.5,
    "text": 1.0,
    "link": 0.5,
    "noise": 0.1,
}

#: A topic keyword counts as this many occurrences in a topic profile (cosine model) and as
#: this many pseudo-documents' worth of evidence in 1-DNF positive features (learned models).
KEYWORD_WEIGHT: float = 5.0

#: Vocabulary of learned models: terms in fewer documents than this are dropped …
MIN_DF: int = 2
#: … and at most this many terms (most frequent first) are kept.
MAX_FEATURES: int = 60_000

#: 1-DNF: a positive feature occurs in at least this share of the positives …
DNF_MIN_POSITIVE_SHARE: float = 0.2
#: … and at least this many times more often (by document share) among positives than unlabelled.
DNF_RATIO: float = 4.0
#: When fewer than this share of the unlabelled pages have no positive feature at all, the
#: unlabelled pages with the least positive-feature mass are taken as reliable negatives instead.
DNF_MIN_NEGATIVE_SHARE: float = 0.3

#: Iterative SVM: a correctly classified page counts as "low margin" when |f(x)| is below this.
LOW_MARGIN: float = 0.5
#: Iterative SVM: at most this many rounds.
MAX_ROUNDS: int = 10
#: Roc-SVM rule (Li & Liu 2003): a round is kept only while its recall on the held-back positives
#: is at most this much below the first round's; later rounds are dropped.
ROC_SVM_MAX_LOST: float = 0.08
#: LinearSVC regularisation.
SVM_C: float = 1.0

#: Ensemble: share of the positives held back to choose the rounds (Roc-SVM rule) and fit the
#: PSO weights (at least 3 pages). The kept rounds are then retrained on every positive.
HOLDOUT_SHARE: float = 0.3
#: Ensemble fitness: ``"auc"`` (held-back positives vs unlabelled pages, threshold then matched
#: to the first round's positive rate), ``"hinge"``, ``"f1"`` or ``"pu"`` (Lee & Liu); see
#: ensemble.py.
ENSEMBLE_CRITERION: str = "auc"
#: ``"auc"`` fitness: weight of the normalised entropy of the round weights (pull towards equal
#: weights; 0 = AUC alone). 0.03 chosen among 0.003 / 0.01 / 0.03 on the benchmark categories.
ENSEMBLE_UNIFORM_PULL: float = 0.03

#: Self-training after the ensemble (transductive: the unlabelled pages are there at training
#: time): this many rounds, each an SVM trained on the positives plus the top
#: ``SELF_TRAIN_POSITIVE_SHARE`` × (estimated topic pages among the unlabelled) as positives and
#: every unlabelled page ranked below ``SELF_TRAIN_NEGATIVE_FROM`` × that estimate as negatives;
#: the band in between is left out. 0 = off. Chosen among 0.3/0.5/0.7 × 1.2/1.5/2 × 2/3/5 rounds
#: (and C 0.3/1) on Birds, Chemistry and British_History (docs/relevance.md).
SELF_TRAIN_ROUNDS: int = 3
SELF_TRAIN_POSITIVE_SHARE: float = 0.5
SELF_TRAIN_NEGATIVE_FROM: float = 1.5

#: Adaptive topic (``FOCUSCRAWL_ADAPT_TOPIC``). Defaults chosen in the crawl simulation on Birds,
#: Chemistry and British_History at 500 pages, validated on Space_Astronomy, Health_and_medicine
#: and African_Geography (docs/relevance.md, "Adaptive topic in the crawl").
#: A page feeds the profile only when its relevance is at least this (absolute) …
ADAPT_MIN_RELEVANCE: float = 0.0
#: … and at least this multiple of the model's relevance threshold (which the crawl calibrates
#: to the topic's page cosines, 0.05-0.3 on Wikispeedia: an absolute 0.5 never passed); 0 = no
#: such gate. 1 = every page the crawl judges relevant.
ADAPT_MIN_RATIO: float = 1.0
#: … and it contains at least this many of the original topic terms (co-occurrence guard).
ADAPT_MIN_ORIGINAL_TERMS: int = 2
#: Original terms never fall below this share of their starting weight.
ADAPT_ORIGINAL_FLOOR: float = 1.0
#: Added terms together may hold at most this share of the profile's total weight.
ADAPT_MAX_NEW_SHARE: float = 0.3
#: At most this many new (or boosted) terms enter the profile.
ADAPT_MAX_NEW_TERMS: int = 200
#: A candidate term must occur in at least this many confident pages before it may enter.
ADAPT_MIN_PAGES: int = 3
#: The added terms are recomputed every this many confident pages.
ADAPT_UPDATE_EVERY: int = 5
#: The best new term weighs this many times the mean original term's weight (the others in
#: proportion to their rank score), before the share cap. A profile built from whole seed pages
#: has thousands of terms: at 1 the added terms held ~1% of the weight and changed nothing; at
#: 100 they fill the cap once a few dozen terms have entered.
ADAPT_NEW_SCALE: float = 100.0
#: Original terms may gain weight too (a word rare in the seeds but frequent in the confident
#: pages); the gain counts as added weight under the cap.
ADAPT_BOOST_ORIGINAL: bool = True
#: Pages are judged against the adapted profile too (False: only anchors, contexts and blocks
#: see it; measured: no change to the crawl's recall, the gain comes through the judge).
ADAPT_JUDGE: bool = True
