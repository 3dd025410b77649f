"""Page partition into text, link and noise blocks, with link contexts (lxml only, no Scrapy)."""

from focuscrawl.blocks.model import Block, BlockKind, Link, Page
from focuscrawl.blocks.partition import main_text, partition
from focuscrawl.blocks.template import TemplateLinks

__all__ = ["Block", "BlockKind", "Link", "Page", "TemplateLinks", "main_text", "partition"]
