#!/usr/bin/env python3
"""Extract a requirements catalogue from the MCP specification prose.

mcp_ref's catalogue script: the team's (``../shared/spec/extract_requirements.py``),
carried in the repository so that a clone of mcp_ref alone can make the catalogues
its tests and requirement manifests are keyed by (``make spec``, tools/fetch_spec.py,
runs it on the fetched spec). Its output must stay byte for byte the team's:
tests/test_fetch_spec.py compares them wherever ``../shared/spec`` is present, so a
change here is a change of every requirement id and goes to both copies.

Standard library only.  Reads every ``*.mdx`` file under one or more spec
version folders (e.g. ``spec/2025-11-25``, or ``spec/ext-tasks`` for the
tasks extension; ``changelog.mdx`` is skipped, its keywords describe changes
rather than require anything) and writes, per version folder:

* ``requirements.tsv`` - one row per normative statement, i.e. a sentence or
  list item that contains an RFC 2119 / BCP 14 keyword (MUST, MUST NOT,
  REQUIRED, SHALL, SHALL NOT, SHOULD, SHOULD NOT, RECOMMENDED,
  NOT RECOMMENDED, MAY, OPTIONAL).  Bold (``**MUST**``) and italic
  (``_MUST_``) forms are recognised, as are plain uppercase forms; quoted
  keywords (the BCP 14 boiler-plate ``"MUST"``) and keywords inside code
  spans/blocks are ignored.  Paragraphs are split into sentences; each list
  item is handled on its own.
* ``methods.tsv`` (only with ``--methods``) - every JSON-RPC method in
  ``schema.json``: direction (from the ClientRequest / ServerRequest /
  ClientNotification / ServerNotification unions), params type and fields,
  result type, and whether it can be task-augmented (params have ``task``).

``schema.mdx`` (the generated TypeDoc reference, present from 2025-06-18) is
handled specially: the doc comments of every type and member are extracted
(comments inherited from a base type are attributed to that base type and
de-duplicated), so the section column reads ``<group> > <Type> > <member>``.

Where ``schema.mdx`` yields no statements (2026-07-28 ships only a skeleton
page that lists the categories) or is missing (``ext-tasks``), the same
statements are read from the JSDoc comments of ``schema.ts`` instead, if
they carry ``@category`` tags (the 2024-11-05 and 2025-03-26 ``schema.ts``
have none and give no schema rows).  The rows have file ``schema.ts`` and the
section ``<category> > <Type> > <member>``: category from the ``@category``
tag of the type's own comment (left out for ``@internal`` types, which have
none), Type the interface, type alias or constant the comment belongs to,
member the property it precedes (dotted for nested object types, e.g.
``sampling.context``; left out for the type's own comment).  Only the text
before the first block tag is read (``@see``, ``@example``, ``@deprecated``,
``@format`` ... and their text are dropped; modifier tags such as
``@internal`` are removed); ``{@link Target | label}`` becomes ``label`` and
``{@link Target}`` becomes ``Target``.  A member comment repeated verbatim on
a type that extends the declaring type is left to the base type; the same
sentence on two unrelated types gives two rows.  ``spec.types.ts`` in
``ext-tasks`` is a vendored copy of the core draft ``schema.ts`` and is not
read.

Usage::

    python3 extract_requirements.py [VERSION_DIR ...] [--methods] [--summary] [--stdout]

With no VERSION_DIR, every ``YYYY-MM-DD`` folder of the checkout's ``spec/`` (what
``make spec`` fetched) is processed; ``ext-tasks`` has to be named.

Columns of requirements.tsv (tab separated, header row, no quoting; fields
never contain tabs or newlines):

    id           <chapter path without .mdx>#<ordinal>, e.g.
                 basic/utilities/cancellation#3 (ordinal = document order
                 within the file, from 1); schema rows are schema#<ordinal>
                 whether they come from schema.mdx or schema.ts.  Stable
                 while the source file is unchanged; use fingerprint to
                 re-map after spec edits.
    file         chapter file relative to the version folder (schema.ts for
                 schema rows read from it)
    line         1-based source line where the statement starts
                 (schema.mdx rows: the line where the comment's HTML starts)
    area         auth (basic/authorization.mdx, or the chapters under
                 basic/authorization/ in 2026-07-28), transport
                 (basic/transports.mdx, or basic/transports/) or protocol
                 (everything else)
    section      heading path inside the chapter, joined with " > "
                 ("(intro)" before the first heading)
    keyword      strongest keyword of the statement itself
                 (MUST-level > SHOULD-level > MAY-level; first wins on ties)
    party        guessed from word cues in the grammatical subject: client,
                 server, both, requestor, receiver, transport,
                 authorization-server, client+authorization-server, unknown
                 (unknown = no actor named, typically a message/data rule)
    text         the statement; markdown emphasis and links stripped, inline
                 code kept in backticks.  A list item that is a fragment is
                 prefixed with its lead-in ("For Authorization Servers: -
                 SHOULD fetch ...").  A sentence with a keyword that ends in
                 ':' and introduces a list (or table) carries the items,
                 each as " - item" ("Receivers ... SHOULD: - Stop processing
                 ... - Free associated resources ...").  Items that hold
                 their own keyword also get their own row.
    context      lead-in of the enclosing list when not already in text, or
                 the antecedent sentence when the statement starts with an
                 anaphor ("This SHOULD be ...", "Otherwise, ...")
    keywords     all distinct keywords occurring in text, in order, ';'-joined
    form         bold / italic / plain / mixed: how the statement's own
                 keywords are emphasised in the source
    fingerprint  first 12 hex digits of sha1(text); equal fingerprints across
                 versions mean identical statement text

Columns of methods.tsv: method, kind (request/notification), direction
(client->server, server->client, both), message_type, params_type (name of
the params definition, "(inline)" when anonymous), params_required,
params_fields (required first, optional marked "?"), result_type (requests
only; <Name>Result if it exists in the receiving side's result union, else
EmptyResult), task_augmentable (yes/no), description (first sentence).
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import os
import re
import sys
from collections import Counter, OrderedDict
from html.parser import HTMLParser

# ---------------------------------------------------------------------------
# Keywords
# ---------------------------------------------------------------------------

KEYWORD_LEVEL = {
    "MUST": 3,
    "MUST NOT": 3,
    "REQUIRED": 3,
    "SHALL": 3,
    "SHALL NOT": 3,
    "SHOULD": 2,
    "SHOULD NOT": 2,
    "RECOMMENDED": 2,
    "NOT RECOMMENDED": 2,
    "MAY": 1,
    "OPTIONAL": 1,
}

# Private-use characters used as in-band markers while processing text.
B_OPEN, B_CLOSE = "\ue000", "\ue001"  # bold keyword
I_OPEN, I_CLOSE = "\ue002", "\ue003"  # italic keyword
ESC_US, ESC_STAR = "\ue004", "\ue005"  # escaped _ and *
CODE_OPEN, CODE_CLOSE = "\ue100", "\ue101"  # inline code placeholder
MARKERS = B_OPEN + B_CLOSE + I_OPEN + I_CLOSE

_KW_ALT = (
    r"MUST\s+NOT|SHALL\s+NOT|SHOULD\s+NOT|NOT\s+RECOMMENDED|MUST|SHALL|"
    r"SHOULD|REQUIRED|RECOMMENDED|MAY|OPTIONAL"
)
KW_RE = re.compile(r"(?<![A-Za-z0-9_\-])(" + _KW_ALT + r")(?![A-Za-z0-9_\-])")
BOLD_KW_RE = re.compile(r"\*\*(\s*)(" + _KW_ALT + r")(\s*)\*\*")
BOLD_KW_RE2 = re.compile(r"(?<!\w)__(" + _KW_ALT + r")__(?!\w)")
ITALIC_KW_RE = re.compile(r"(?<![\w*])([*_])(" + _KW_ALT + r")\1(?![\w*])")
QUOTES_BEFORE = "\"\u201c'\u2018"
QUOTES_AFTER = "\"\u201d'\u2019"


def find_keywords(s: str):
    """Return list of (keyword, form, start) for normative keywords in s.

    s is processed text that may contain emphasis markers and code
    placeholders (code content is not visible, so keywords in code are
    ignored).  Quoted keywords ("MUST") are ignored.
    """
    out = []
    for m in KW_RE.finditer(s):
        kw = re.sub(r"\s+", " ", m.group(1))
        before = s[m.start() - 1] if m.start() > 0 else ""
        after = s[m.end()] if m.end() < len(s) else ""
        if (before and before in QUOTES_BEFORE) or (after and after in QUOTES_AFTER):
            continue
        if before == B_OPEN:
            form = "bold"
        elif before == I_OPEN:
            form = "italic"
        else:
            form = "plain"
        out.append((kw, form, m.start()))
    return out


def strongest(kws):
    best = None
    for kw, _form, _pos in kws:
        if best is None or KEYWORD_LEVEL[kw] > KEYWORD_LEVEL[best]:
            best = kw
    return best


# ---------------------------------------------------------------------------
# Inline markdown processing
# ---------------------------------------------------------------------------

INLINE_HTML_TAGS = "br|sup|sub|span|div|a|img|b|i|em|strong|u|small|kbd|code|p|ul|ol|li|mark|abbr"


class Inline:
    """Processes inline markdown of one paragraph.

    Keeps newlines (for line-number bookkeeping), replaces inline code with
    placeholders, marks bold/italic keywords, strips other emphasis and links.
    """

    def __init__(self):
        self.codes: list[str] = []

    def process(self, text: str) -> str:
        codes = self.codes

        def code_sub(m):
            content = m.group(2)
            nl = content.count("\n")
            content = re.sub(r"\s+", " ", content)
            if m.group(1) == "`" * len(m.group(1)) and len(m.group(1)) > 1:
                content = content.strip()
            codes.append("`" + content + "`")
            return CODE_OPEN + str(len(codes) - 1) + CODE_CLOSE + "\n" * nl

        t = re.sub(r"(`+)(.+?)\1", code_sub, text, flags=re.S)
        t = t.replace("\\_", ESC_US).replace("\\*", ESC_STAR)
        t = re.sub(r"\\([\\`{}\[\]()#+\-.!|<>~])", r"\1", t)
        t = re.sub(r"<!--.*?-->", "", t, flags=re.S)
        t = re.sub(r"<(https?://[^>\s]+)>", r"\1", t)
        t = re.sub(r"</?(?:" + INLINE_HTML_TAGS + r")\b[^>]*>", "", t)
        t = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", t)
        link_re = re.compile(r"\[([^\[\]]*)\]\((?:[^()\s]|\([^()]*\))*\)")
        for _ in range(5):
            t2 = link_re.sub(r"\1", t)
            if t2 == t:
                break
            t = t2
        t = BOLD_KW_RE.sub(lambda m: m.group(1) + B_OPEN + m.group(2) + B_CLOSE + m.group(3), t)
        t = BOLD_KW_RE2.sub(lambda m: B_OPEN + m.group(1) + B_CLOSE, t)
        t = ITALIC_KW_RE.sub(lambda m: I_OPEN + m.group(2) + I_CLOSE, t)
        t = re.sub(r"\*\*(?=\S)(.+?)(?<=\S)\*\*", r"\1", t, flags=re.S)
        t = re.sub(r"(?<!\w)__(?=\S)(.+?)(?<=\S)__(?!\w)", r"\1", t, flags=re.S)
        t = re.sub(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])", r"\1", t, flags=re.S)
        t = re.sub(r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])", r"\1", t, flags=re.S)
        t = re.sub(r"~~(.+?)~~", r"\1", t, flags=re.S)
        t = html.unescape(t)
        t = t.replace(ESC_US, "_").replace(ESC_STAR, "*")
        return t

    def restore(self, t: str) -> str:
        """Final text: placeholders restored, markers removed, whitespace collapsed."""
        t = re.sub(CODE_OPEN + r"(\d+)" + CODE_CLOSE, lambda m: self.codes[int(m.group(1))], t)
        for ch in MARKERS:
            t = t.replace(ch, "")
        t = t.replace("\u00a0", " ")
        return re.sub(r"\s+", " ", t).strip()


ABBREVIATIONS = {"e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "incl.", "no.", "sec.", "fig.", "ex.", "resp."}


def split_sentences(t: str):
    """Split processed text into sentences.  Returns [(start, end)] offsets."""
    spans = []
    start = 0
    for m in re.finditer(r"[.!?][\"'\u201d\u2019)\]" + MARKERS + r"]*(\s+)", t):
        end = m.start(1)
        nxt = t[m.end() : m.end() + 1]
        if not nxt:
            continue
        if not (nxt.isupper() or nxt.isdigit() or nxt in "\"“'`[(" + CODE_OPEN + B_OPEN + I_OPEN):
            continue
        word = re.search(r"(\S+)$", t[: m.start() + 1])
        w = word.group(1).lower().lstrip("(\"'") if word else ""
        for ch in MARKERS:
            w = w.replace(ch, "")
        if w in ABBREVIATIONS and not (w == "etc." and nxt.isupper()):
            continue
        if re.fullmatch(r"[a-z]\.", w) and len(w) == 2:  # single-letter initial
            continue
        spans.append((start, end))
        start = m.end()
    if t[start:].strip():
        spans.append((start, len(t.rstrip())))
    # trim leading whitespace of each span
    out = []
    for s, e in spans:
        while s < e and t[s].isspace():
            s += 1
        if s < e:
            out.append((s, e))
    return out


# ---------------------------------------------------------------------------
# Block parser (a small CommonMark-ish subset sufficient for the MCP docs)
# ---------------------------------------------------------------------------

FENCE_RE = re.compile(r"^(\s*)(`{3,}|~{3,})")
HEADING_RE = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
LIST_RE = re.compile(r"^(\s*)([-*+]|\d{1,3}[.)])([ \t]+)(.*)$")
LIST_EMPTY_RE = re.compile(r"^(\s*)([-*+]|\d{1,3}[.)])\s*$")
TABLE_RE = re.compile(r"^\s*\|")
HR_RE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
JSX_RE = re.compile(
    r"^\s*</?(Note|Warning|Info|Tip|Check|Danger|Card|CardGroup|Tabs|Tab|Steps|"
    r"Step|Accordion|AccordionGroup|Frame|Callout|Expandable|ResponseField|"
    r"ParamField|CodeGroup|div|section|details|summary|img|br)\b"
)


class Block:
    __slots__ = ("items", "kind", "level", "line", "lines", "rows", "title")

    def __init__(self, kind, line, **kw):
        self.kind = kind
        self.line = line
        self.lines = kw.get("lines")  # para: list of (lineno, text)
        self.level = kw.get("level")  # heading
        self.title = kw.get("title")  # heading
        self.items = kw.get("items")  # list: list of Item
        self.rows = kw.get("rows")  # table: list of (lineno, [cells])


class Item:
    __slots__ = ("blocks", "line")

    def __init__(self, line, blocks):
        self.line = line
        self.blocks = blocks


def indent_of(s: str) -> int:
    return len(s) - len(s.lstrip(" "))


def is_block_start(s: str) -> bool:
    return bool(
        HEADING_RE.match(s)
        or FENCE_RE.match(s)
        or LIST_RE.match(s)
        or TABLE_RE.match(s)
        or JSX_RE.match(s)
        or HR_RE.match(s)
        or re.match(r"^\s{0,3}>", s)
    )


def parse_blocks(lines):
    """lines: list of (lineno, text).  Returns list of Block."""
    blocks = []
    i, n = 0, len(lines)
    while i < n:
        ln, text = lines[i]
        if not text.strip():
            i += 1
            continue
        fm = FENCE_RE.match(text)
        if fm:
            fence = fm.group(2)
            j = i + 1
            while j < n and not lines[j][1].strip().startswith(fence[0] * len(fence)):
                j += 1
            blocks.append(Block("code", ln))
            i = j + 1
            continue
        if text.lstrip().startswith("<!--"):
            j = i
            while j < n and "-->" not in lines[j][1]:
                j += 1
            i = j + 1
            continue
        if re.match(r"^\s{0,3}>", text):
            quote = []
            while i < n and re.match(r"^\s{0,3}>", lines[i][1]):
                quote.append((lines[i][0], re.sub(r"^\s{0,3}> ?", "", lines[i][1])))
                i += 1
            blocks.extend(parse_blocks(quote))
            continue
        if JSX_RE.match(text):
            # skip the tag (possibly spanning lines); keep trailing text if any
            blocks.append(Block("jsx", ln))
            j = i
            while j < n and ">" not in lines[j][1]:
                j += 1
            rest = ""
            if j < n:
                rest = lines[j][1][lines[j][1].rfind(">") + 1 :] if j == i else ""
                rest = re.sub(r"</?[A-Z][A-Za-z]*[^>]*>", "", rest)
            if rest.strip():
                lines = [*lines[:j], (lines[j][0], rest), *lines[j + 1 :]]
                n = len(lines)
                i = j
            else:
                i = j + 1
            continue
        hm = HEADING_RE.match(text)
        if hm:
            blocks.append(Block("heading", ln, level=len(hm.group(1)), title=hm.group(2)))
            i += 1
            continue
        if HR_RE.match(text):
            i += 1
            continue
        if TABLE_RE.match(text):
            rows = []
            while i < n and TABLE_RE.match(lines[i][1]):
                row = lines[i][1].strip()
                cells = [c.strip() for c in re.split(r"(?<!\\)\|", row.strip("|"))]
                if not all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                    rows.append((lines[i][0], cells))
                i += 1
            blocks.append(Block("table", ln, rows=rows))
            continue
        if LIST_RE.match(text):
            blk, i = parse_list(lines, i)
            blocks.append(blk)
            continue
        # paragraph
        para = [(ln, text.strip())]
        i += 1
        while i < n and lines[i][1].strip() and not is_block_start(lines[i][1]):
            para.append((lines[i][0], lines[i][1].strip()))
            i += 1
        blocks.append(Block("para", ln, lines=para))
    return blocks


def parse_list(lines, i):
    n = len(lines)
    first = LIST_RE.match(lines[i][1])
    base_indent = len(first.group(1))
    ordered = first.group(2)[0].isdigit()
    items = []
    start_line = lines[i][0]
    while i < n:
        ln, text = lines[i]
        m = LIST_RE.match(text)
        if not m or len(m.group(1)) != base_indent or m.group(2)[0].isdigit() != ordered:
            break
        pad = len(m.group(3))
        content_indent = len(m.group(1)) + len(m.group(2)) + (pad if pad <= 4 else 1)
        item_lines = [(ln, m.group(4))]
        i += 1
        last_blank = False
        while i < n:
            ln2, t2 = lines[i]
            if not t2.strip():
                j = i + 1
                while j < n and not lines[j][1].strip():
                    j += 1
                if j < n and indent_of(lines[j][1]) >= content_indent:
                    item_lines.append((ln2, ""))
                    i += 1
                    last_blank = True
                    continue
                break
            ind = indent_of(t2)
            fm = FENCE_RE.match(t2)
            if fm and ind > base_indent:
                # fenced code inside the item: take it whole
                cut = min(ind, content_indent)
                fence = fm.group(2)
                item_lines.append((ln2, t2[cut:]))
                i += 1
                while i < n:
                    item_lines.append((lines[i][0], lines[i][1][min(indent_of(lines[i][1]), cut) :]))
                    closing = lines[i][1].strip().startswith(fence[0] * len(fence))
                    i += 1
                    if closing:
                        break
                last_blank = False
                continue
            if ind >= content_indent:
                item_lines.append((ln2, t2[content_indent:]))
                i += 1
                last_blank = False
                continue
            if LIST_RE.match(t2) or LIST_EMPTY_RE.match(t2):
                if ind > base_indent:  # under-indented nested list
                    item_lines.append((ln2, t2[ind:]))
                    i += 1
                    last_blank = False
                    continue
                break
            if not last_blank and item_lines and item_lines[-1][1].strip() and not is_block_start(t2):
                item_lines.append((ln2, t2.strip()))  # lazy continuation
                i += 1
                continue
            break
        items.append(Item(ln, parse_blocks(item_lines)))
        j = i
        while j < n and not lines[j][1].strip():
            j += 1
        if j < n:
            m3 = LIST_RE.match(lines[j][1])
            if m3 and len(m3.group(1)) == base_indent and m3.group(2)[0].isdigit() == ordered:
                i = j
                continue
        break
    return Block("list", start_line, items=items), i


# ---------------------------------------------------------------------------
# Statement extraction
# ---------------------------------------------------------------------------

ANAPHOR_RE = re.compile(
    r"^(This|These|That|Those|It|Its|They|Such|Otherwise|Instead|Therefore|"
    r"Similarly|Then|Here|Specifically|Namely|In this case|In such cases|"
    r"In these cases|In these scenarios|In other words|In that case|If so|"
    r"If not|The former|The latter)\b"
)
LEADIN_ANAPHOR_RE = re.compile(
    r"^(Specifically|Namely|In particular|That is|"
    r"(This|That|It) (could|can|may|might|must|should|would|will|is|includes?|means)|"
    r"(These|Those|They) (could|can|may|might|must|should|would|will|are|include))\b"
)
FRAGMENT_CLAUSE_RE = re.compile(
    r"^(If|Unless|When|Where|Once|After|Before|While|Optionally|Otherwise|"
    r"Whenever|Wherever)\b"
)


class Sentence:
    __slots__ = ("kws", "line", "raw", "rec")

    def __init__(self, raw, line, kws):
        self.raw = raw  # processed text with markers/placeholders
        self.line = line
        self.kws = kws
        self.rec = None


class Record:
    def __init__(self, file, line, section, own_raw, own_kws, inline):
        self.file = file
        self.line = line
        self.section = section
        self.own_raw = own_raw
        self.own_kws = own_kws
        self.inline = inline
        self.prefix = ""  # lead-in (fragment) - final text
        self.suffix = ""  # merged anaphoric lead-in sentence
        self.children = []  # final-text strings appended with " - "
        self.context = ""

    def own_text(self):
        return self.inline.restore(self.own_raw)

    def text(self):
        t = self.own_text()
        if self.prefix:
            t = self.prefix + " - " + t
        if self.suffix:
            t = t + " " + self.suffix
        for c in self.children:
            t += " - " + c
        return re.sub(r"\s+", " ", t).strip()


class Lead:
    __slots__ = ("colon", "rec", "suffix", "text")

    def __init__(self, text, rec=None, suffix="", colon=False):
        self.text = text  # final text of the lead-in
        self.rec = rec  # record to extend with children (if any)
        self.suffix = suffix
        self.colon = colon


class Extractor:
    def __init__(self, relpath):
        self.relpath = relpath
        self.records: list[Record] = []
        self.headings: list[tuple[int, str]] = []
        self.section_override = None

    # -- helpers ----------------------------------------------------------
    def section(self):
        if self.section_override is not None:
            return self.section_override
        if not self.headings:
            return "(intro)"
        return " > ".join(h for _lvl, h in self.headings)

    def heading(self, level, title):
        inl = Inline()
        t = inl.restore(inl.process(title)).replace("`", "").rstrip(":").strip()
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, t))

    def para_sentences(self, block):
        inl = Inline()
        raw = "\n".join(t for _ln, t in block.lines)
        t = inl.process(raw)
        sents = []
        for s, e in split_sentences(t):
            seg = t[s:e]
            line = block.lines[0][0] + t[:s].count("\n")
            sents.append(Sentence(seg, line, find_keywords(seg)))
        return inl, sents

    def new_record(self, inl, sent):
        rec = Record(self.relpath, sent.line, self.section(), sent.raw, sent.kws, inl)
        self.records.append(rec)
        sent.rec = rec
        return rec

    @staticmethod
    def is_fragment(inl, sent):
        """A list-item sentence that has no subject of its own."""
        if not sent.kws:
            return False
        prefix = inl.restore(sent.raw[: sent.kws[0][2]])
        if not prefix.strip() or re.fullmatch(r"[^:]{1,60}:\s*", prefix):
            return True  # nothing, or only a "Label:", before the keyword
        if prefix.rstrip().endswith(",") and FRAGMENT_CLAUSE_RE.match(prefix.strip()):
            return True
        return False

    def block_plain(self, blocks):
        """Flatten blocks (item content) to final text for lead-in extension."""
        parts = []
        for b in blocks:
            if b.kind == "para":
                inl = Inline()
                parts.append(inl.restore(inl.process("\n".join(t for _l, t in b.lines))))
            elif b.kind == "list":
                for it in b.items:
                    parts.append("- " + self.block_plain(it.blocks))
            elif b.kind == "table":
                parts.extend(self.table_rows(b))
        return " ".join(p for p in parts if p)

    def table_rows(self, b):
        rows = b.rows[1:] if len(b.rows) > 1 else b.rows  # drop header row
        out = []
        for _ln, cells in rows:
            vals = []
            for c in cells:
                inl = Inline()
                v = inl.restore(inl.process(c))
                if v:
                    vals.append(v)
            if vals:
                out.append("- " + " | ".join(vals))
        return out

    # -- walkers ----------------------------------------------------------
    def run(self, blocks):
        self.container(blocks, parent_lead=None, is_item=False)

    def container(self, blocks, parent_lead, is_item, prev_sibling=None):
        """Process a sequence of blocks (a document, or the content of a list item).

        parent_lead: Lead of the list this item belongs to (items only).
        prev_sibling: (Inline, Sentence) last sentence of the previous item,
        used as context when the item starts with an anaphor ("These ...").
        """
        prev = None  # (inl, Sentence) most recent sentence
        last_lead = None  # Lead candidate produced by preceding paragraph
        for bi, b in enumerate(blocks):
            if b.kind == "heading":
                self.heading(b.level, b.title)
                prev, last_lead = None, None
                continue
            if b.kind in ("code", "jsx"):
                last_lead = None
                continue
            if b.kind == "table":
                if last_lead is not None and last_lead.rec is not None and last_lead.colon:
                    last_lead.rec.children.extend(r[2:] for r in self.table_rows(b))
                last_lead = None
                continue
            if b.kind == "list":
                self.list_block(b, last_lead)
                last_lead = None
                prev = None
                continue
            if b.kind != "para":
                continue
            inl, sents = self.para_sentences(b)
            first_item_para = is_item and bi == 0
            for si, s in enumerate(sents):
                plain_s = inl.restore(s.raw)
                if s.kws:
                    rec = self.new_record(inl, s)
                    lead_ctx = parent_lead.text if (first_item_para and parent_lead) else ""
                    if first_item_para and si == 0 and parent_lead is not None and self.is_fragment(inl, s):
                        rec.prefix = parent_lead.text
                    elif ANAPHOR_RE.match(plain_s):
                        ante = prev if prev is not None else (prev_sibling if first_item_para and si == 0 else None)
                        ante_t = ante[0].restore(ante[1].raw) if ante is not None else ""
                        if si == 0 and lead_ctx and ante_t and ante_t != lead_ctx:
                            rec.context = lead_ctx + " ... " + ante_t
                        else:
                            rec.context = ante_t or lead_ctx
                    elif lead_ctx:
                        rec.context = lead_ctx
                prev = (inl, s)
            # lead-in candidate for a following list / table
            last_lead = self.make_lead(inl, sents, b, first_item_para, parent_lead, blocks[bi - 1] if bi > 0 else None)
        return prev

    def make_lead(self, inl, sents, block, first_item_para, parent_lead, prev_block):
        if not sents:
            return None
        last = sents[-1]
        last_plain = inl.restore(last.raw)
        colon = last_plain.endswith(":")
        if first_item_para:
            text = inl.restore("".join(s.raw + " " for s in sents))
            if sents[0].rec is not None and sents[0].rec.prefix and len(sents) == 1:
                text = sents[0].rec.text()
        else:
            text = last_plain
        rec, suffix = None, ""
        if colon:
            if last.rec is not None:
                rec = last.rec
            elif LEADIN_ANAPHOR_RE.match(last_plain):
                if len(sents) >= 2 and sents[-2].rec is not None:
                    rec, suffix = sents[-2].rec, last_plain
                    if not first_item_para:
                        text = inl.restore(sents[-2].raw) + " " + last_plain
                elif len(sents) == 1 and prev_block is not None and prev_block.kind == "para":
                    # "Specifically:" as its own paragraph after a keyword sentence
                    cand = [r for r in self.records if r.line >= prev_block.line and r.file == self.relpath]
                    if cand and cand[-1].line <= block.line:
                        rec, suffix = cand[-1], last_plain
                        text = cand[-1].own_text() + " " + last_plain
        if rec is not None and suffix:
            rec.suffix = suffix
        if not first_item_para and not colon:
            return None  # a plain paragraph before a list is not a lead-in
        return Lead(text=text, rec=rec, suffix=suffix, colon=colon)

    def list_block(self, b, lead):
        if lead is not None and lead.rec is not None and lead.colon:
            for it in b.items:
                lead.rec.children.append(self.block_plain(it.blocks))
        prev_sibling = None
        for it in b.items:
            last = self.container(it.blocks, parent_lead=lead, is_item=True, prev_sibling=prev_sibling)
            prev_sibling = last


# ---------------------------------------------------------------------------
# schema.mdx (TypeDoc HTML) support
# ---------------------------------------------------------------------------


class SchemaDocParser(HTMLParser):
    """Collects doc comments from the generated schema reference.

    Yields (lineno, section_path, markdown_text) for the type-level comment of
    each type and for the comments of its own (non-inherited) members and
    their nested type-declaration parameters.
    """

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.group = ""
        self.type = ""
        self.stack = []  # (tag, classes)
        self.member = None  # current member name
        self.member_inherited = False
        self.expect_member_name = False
        self.member_name_buf = None
        self.param = None
        self.expect_param = False
        self.in_signature = 0
        self.comment_depth = None  # stack depth where the comment div opened
        self.buf = []
        self.comment_line = 0
        self.out = []
        self.pending = []
        self.in_aside = False
        self.inherited_from = ""
        self.inherit_map = {}  # "Type.member" -> "Base.member"

    def _classes(self, attrs):
        return dict(attrs).get("class", "") or ""

    def handle_starttag(self, tag, attrs):
        cls = self._classes(attrs)
        if tag in ("br", "img", "use", "input", "hr", "meta", "link"):
            if self.comment_depth is not None and tag == "br":
                self.buf.append("\n")
            return
        self.stack.append((tag, cls))
        if self.comment_depth is not None:
            if tag == "p":
                self.buf.append("\n\n")
            elif tag == "li":
                self.buf.append("\n- ")
            elif tag in ("ul", "ol"):
                self.buf.append("\n\n")
            elif tag == "code":
                self.buf.append("`")
            elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
                self.buf.append("\n\n")
            return
        if tag == "aside" and "tsd-sources" in cls:
            self.in_aside = True
        if tag == "section" and "tsd-member" in cls:
            self.member = ""
            self.member_inherited = "tsd-is-inherited" in cls
            self.inherited_from = ""
            self.pending = []
            self.param = None
        elif tag == "div" and "tsd-anchor-link" in cls and self.member == "":
            self.expect_member_name = True
            self.member_name_buf = []
        elif tag == "li" and "tsd-parameter" in cls:
            self.expect_param = True
            self.param = None
        elif tag == "span" and "tsd-kind-property" in cls and self.expect_param:
            self.param = ""
        elif tag == "div" and "tsd-comment" in cls:
            self.comment_depth = len(self.stack)
            self.buf = []
            self.comment_line = self.getpos()[0]
        elif tag == "div" and "tsd-signature" in cls:
            self.in_signature += 1

    def handle_endtag(self, tag):
        if tag in ("br", "img", "use", "input", "hr", "meta", "link"):
            return
        # pop to the matching tag
        idx = None
        for k in range(len(self.stack) - 1, -1, -1):
            if self.stack[k][0] == tag:
                idx = k
                break
        if idx is None:
            return
        closed = self.stack[idx:]
        del self.stack[idx:]
        if self.comment_depth is not None:
            if len(self.stack) < self.comment_depth:
                self._emit()
                self.comment_depth = None
            elif tag == "code":
                self.buf.append("`")
            elif tag == "p":
                self.buf.append("\n\n")
            return
        for t, cls in closed:
            if t == "aside":
                self.in_aside = False
            if t == "section" and "tsd-member" in cls:
                m = re.search(r"Inherited from\s+([\w$]+(?:\s*\.\s*[\w$]+)?)", re.sub(r"\s+", " ", self.inherited_from))
                self.inherited_from = re.sub(r"\s+", "", m.group(1)) if m else ""
                inh = self.inherited_from if self.member_inherited else ""
                if inh and self.type and self.member:
                    self.inherit_map[self.type + "." + self.member] = inh
                for line, path, text in self.pending:
                    self.out.append((line, path, text, inh))
                self.pending = []
                self.member = None
                self.member_inherited = False
                self.param = None
            elif t == "div" and "tsd-anchor-link" in cls and self.expect_member_name:
                name = "".join(self.member_name_buf or [])
                name = re.split(r"[?:(]", name, maxsplit=1)[0].strip()
                self.member = name or "?"
                self.expect_member_name = False
            elif t == "div" and "tsd-signature" in cls:
                self.in_signature -= 1
            elif t == "li" and "tsd-parameter" in cls:
                self.param = None
                self.expect_param = False

    def handle_data(self, data):
        if self.comment_depth is not None:
            self.buf.append(data)
            return
        if self.in_aside and self.member is not None:
            self.inherited_from += data
            return
        if self.expect_member_name and self.member_name_buf is not None:
            if not self.member_name_buf or not "".join(self.member_name_buf):
                self.member_name_buf.append(data)
            return
        if self.param == "" and self.expect_param:
            self.param = data.strip()
            return
        if not self.stack or self.stack[-1][0] not in ("span", "a", "code"):
            for line in data.split("\n"):
                hm = re.match(r"^(#{2,3})\s+(.*)$", line.strip())
                if hm:
                    title = hm.group(2).replace("`", "").strip()
                    if len(hm.group(1)) == 2:
                        self.group, self.type = title, ""
                    else:
                        self.type = title

    def _emit(self):
        text = "".join(self.buf)
        text = re.sub(r"[ \t]+\n", "\n", text).strip()
        if not text:
            return
        path = [p for p in (self.group, self.type) if p]
        if self.member:
            m = self.member
            if self.param:
                m += "." + self.param
            path.append(m)
        if self.member is not None:
            self.pending.append((self.comment_line, " > ".join(path), text))
        else:
            self.out.append((self.comment_line, " > ".join(path), text, ""))


def extract_schema_mdx(path, relpath):
    with open(path, encoding="utf-8") as f:
        src = f.read()
    src = strip_frontmatter(src)[0]
    p = SchemaDocParser()
    p.feed(src)
    p.close()
    comments = []
    for line, section, md, inh in p.out:
        if inh:
            # attribute inherited docs to the type that declares them
            seen_chain = set()
            while inh in p.inherit_map and inh not in seen_chain:
                seen_chain.add(inh)
                inh = p.inherit_map[inh]
            base, _, mem = inh.partition(".")
            tail = section.split(" > ")[-1]
            if mem and "." in tail:  # nested parameter: keep ".param"
                mem = mem + tail[tail.index(".") :]
            section = " > ".join(x for x in (base, mem) if x)
        comments.append((section, [(line, text) for text in md.split("\n")]))
    return schema_comment_records(relpath, comments)


def schema_comment_records(relpath, comments, per_section=False):
    """Statements of schema doc comments: comments = [(section, md_lines)].

    md_lines is [(lineno, markdown line)].  A statement repeated verbatim is
    kept once (the first): anywhere in the file, or with per_section only
    within the same section.
    """
    ex = Extractor(relpath)
    seen = set()
    for section, md_lines in comments:
        blocks = parse_blocks(md_lines)
        ex.section_override = section
        before = len(ex.records)
        ex.run(blocks)
        # de-duplicate statements repeated verbatim on several types
        keep = []
        for r in ex.records[before:]:
            key = (section, r.text()) if per_section else r.text()
            if key in seen:
                continue
            seen.add(key)
            keep.append(r)
        ex.records[before:] = keep
    return ex.records


# ---------------------------------------------------------------------------
# schema.ts (JSDoc comments) support
# ---------------------------------------------------------------------------

# Block tags whose text TypeDoc shows as part of the comment body; every other
# block tag (@category, @see, @example, @deprecated, @format, ...) ends the
# description and its text is dropped.
TS_BODY_TAGS = {"remarks"}
# Modifier tags: they carry no text, the comment goes on after them.
TS_MODIFIER_TAGS = {
    "internal",
    "hidden",
    "ignore",
    "nullable",
    "readonly",
    "public",
    "private",
    "protected",
    "alpha",
    "beta",
    "experimental",
    "sealed",
    "virtual",
    "override",
    "packageDocumentation",
    "eventProperty",
}
TS_DECL_RE = re.compile(
    r"(?:export\s+)?(?:declare\s+)?(?:default\s+)?"
    r"(interface|type|const|let|var|enum|function|class|namespace)\s+([A-Za-z_$][\w$]*)"
)
TS_STMT_RESET_RE = re.compile(r"(?:import\b|export\s*[{*])")
TS_MEMBER_RE = re.compile(r"(?:readonly\s+)?(\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|[A-Za-z_$][\w$]*)\s*\??\s*[:(]")
TS_INLINE_TAG_RE = re.compile(r"\{@([A-Za-z]+)([^{}]*)\}")


class _TsFrame:
    """One open `{` of schema.ts while scanning.

    kind: "root" (file level), "type" (body of a declared type: interface
    body, or an object type in a type alias), "prop" (object type of a
    member), "other".  member: the member (or, at the root, the declaration)
    being declared at this level.  nest: open ( [ < at this level.
    """

    __slots__ = ("kind", "member", "name", "nest")

    def __init__(self, kind, name=""):
        self.kind = kind
        self.name = name
        self.member = None
        self.nest = 0


def _ts_skip_trivia(src, k):
    """Offset of the next token after whitespace and non-doc comments."""
    n = len(src)
    while k < n:
        if src[k].isspace():
            k += 1
        elif src.startswith("//", k):
            e = src.find("\n", k)
            k = n if e < 0 else e + 1
        elif src.startswith("/*", k) and not src.startswith("/**", k):
            e = src.find("*/", k + 2)
            k = n if e < 0 else e + 2
        else:
            break
    return k


def scan_ts_doc_comments(src):
    """Doc comments of schema.ts with the declaration each one documents.

    Returns (comments, bases).  comments: [(lineno, body, type, member)] in
    source order; body is the text between ``/**`` and ``*/``, type the
    top-level declaration (interface, type alias, const ...) it belongs to
    and member the documented property ("" for the declaration itself;
    nested object types give dotted paths, e.g. ``sampling.context``).
    Comments that document nothing (a file header before ``import``) get
    type "".  bases: {type: [names in its extends clause or type-alias
    expression]}.
    """
    comments = []
    bases = {}
    stack = [_TsFrame("root")]
    decl_kind = {}
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        top = stack[-1]
        if src.startswith("/**", i) and not src.startswith("/**/", i):
            e = src.find("*/", i + 3)
            e = n if e < 0 else e
            body = src[i + 3 : e]
            line = src.count("\n", 0, i) + 1
            k = _ts_skip_trivia(src, e + 2)
            typ, member = "", ""
            if top.kind == "root":
                m = TS_DECL_RE.match(src, k)
                if m:
                    typ = m.group(2)
            elif top.kind in ("type", "prop") and top.nest == 0:
                typ = next((f.name for f in stack if f.kind == "type"), "")
                path = [f.name for f in stack if f.kind == "prop"]
                m = TS_MEMBER_RE.match(src, k)
                if m:
                    path.append(m.group(1).strip("\"'"))
                member = ".".join(path)
            comments.append((line, body, typ, member))
            i = e + 2
            continue
        if src.startswith("//", i) or src.startswith("/*", i):
            i = _ts_skip_trivia(src, i)
            continue
        if (
            top.kind == "root"
            and top.nest == 0
            and (c.isalpha() or c in "_$")
            and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] in "_$"))
        ):
            m = TS_DECL_RE.match(src, i)
            if m:
                top.member = m.group(2)
                decl_kind[top.member] = m.group(1)
                # names this declaration builds on: "extends A, B" or "= A & B & {"
                head = re.match(r"[^{;]*", src[m.end() :]).group(0)
                if m.group(1) == "interface":
                    ext = re.search(r"\bextends\b(.*)", head, re.S)
                    head = ext.group(1) if ext else ""
                elif m.group(1) == "type":
                    head = head.split("=", 1)[1] if "=" in head else ""
                else:
                    head = ""
                bases[top.member] = re.findall(r"[A-Za-z_$][\w$]*", head)
                i = m.end()
                continue
            if TS_STMT_RESET_RE.match(src, i):
                top.member = None
        if top.kind in ("type", "prop") and top.nest == 0 and top.member is None and (c.isalpha() or c in "_$\"'"):
            m = TS_MEMBER_RE.match(src, i)
            if m:
                top.member = m.group(1).strip("\"'")
                i = m.end()
                if src[i - 1] == "(":
                    top.nest += 1
                continue
        if c in "\"'`":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            i = j + 1
            continue
        if c == "{":
            if top.kind == "root" and top.member:
                stack.append(_TsFrame("type", top.member))
            elif top.kind in ("type", "prop") and top.member:
                stack.append(_TsFrame("prop", top.member))
            else:
                stack.append(_TsFrame("other"))
        elif c == "}":
            if len(stack) > 1:
                closed = stack.pop()
                if closed.kind == "type" and decl_kind.get(closed.name) == "interface":
                    stack[-1].member = None  # an interface ends with its body
        elif c in "([<":
            top.nest += 1
        elif c in ")]" or (c == ">" and src[i - 1] != "="):
            top.nest = max(0, top.nest - 1)
        elif top.nest == 0 and (c == ";" or (c == "," and top.kind in ("type", "prop"))):
            top.member = None
        i += 1
    return comments, bases


def _ts_inline_tag(m):
    """{@link Target | label} -> label, {@link Target} -> Target; other inline tags dropped."""
    tag, content = m.group(1), m.group(2).strip()
    nl = "\n" * m.group(0).count("\n")
    if tag not in ("link", "linkcode", "linkplain"):
        return nl
    if "|" in content:
        text = content.split("|", 1)[1]
    else:
        parts = content.split(None, 1)
        text = parts[1] if len(parts) > 1 else (parts[0] if parts else "")
    text = re.sub(r"\s+", " ", text).strip()
    if tag == "linkcode" and not text.startswith("`"):
        text = "`" + text + "`"
    return text + nl


def jsdoc_parts(body, first_line):
    """Split a doc comment into (description lines, category).

    The description is the comment text before its first block tag, as
    [(lineno, markdown line)] with the leading " * " removed; inline
    {@link} tags become their label.  category is the @category text with
    backticks removed.
    """
    lines = body.split("\n")
    out, category, tag = [], "", None
    for k, raw in enumerate(lines):
        t = raw.strip() if k == 0 else re.sub(r"^\s*\*(?!/) ?", "", raw).rstrip()
        tm = re.match(r"\s*@([A-Za-z][\w-]*)\b\s*(.*)$", t)
        if tm:
            name = tm.group(1)
            if name == "category" and not category:
                category = tm.group(2).replace("`", "").strip()
            if name in TS_MODIFIER_TAGS:
                continue
            tag = name
            if name in TS_BODY_TAGS:
                out.append((first_line + k, tm.group(2)))
            continue
        if tag is None or tag in TS_BODY_TAGS:
            out.append((first_line + k, t))
    text = "\n".join(t for _ln, t in out)
    text = TS_INLINE_TAG_RE.sub(_ts_inline_tag, text)
    new = text.split("\n")
    out = [(ln, new[k] if k < len(new) else "") for k, (ln, _t) in enumerate(out)]
    while out and not out[-1][1].strip():
        out.pop()
    return out, category


def extract_schema_ts(path, relpath):
    """Statements of the doc comments of schema.ts (used where schema.mdx gives none).

    section reads "<category> > <Type> > <member>" like the schema.mdx rows;
    category is the @category of the type's own comment and is left out for
    types without one (@internal bases).  A member comment repeated verbatim
    on a type that extends the declaring type is left to the base type.
    """
    with open(path, encoding="utf-8") as f:
        src = f.read().replace("\t", "    ")
    raw, bases = scan_ts_doc_comments(src)
    parsed = []
    categories = {}
    for line, body, typ, member in raw:
        desc, category = jsdoc_parts(body, line)
        if typ and not member and typ not in categories:
            categories[typ] = category
        parsed.append((typ, member, desc))
    own = {}
    for typ, member, desc in parsed:
        if typ and member:
            own.setdefault((typ, member), set()).add(re.sub(r"\s+", " ", " ".join(t for _l, t in desc)).strip())

    def inherited(typ, member, text):
        todo, done = list(bases.get(typ, [])), {typ}
        while todo:
            b = todo.pop()
            if b in done:
                continue
            done.add(b)
            if text in own.get((b, member), ()):
                return True
            todo.extend(bases.get(b, []))
        return False

    comments = []
    for typ, member, desc in parsed:
        if not typ or not any(t.strip() for _l, t in desc):
            continue
        if member and inherited(typ, member, re.sub(r"\s+", " ", " ".join(t for _l, t in desc)).strip()):
            continue
        section = " > ".join(x for x in (categories.get(typ, ""), typ, member) if x)
        comments.append((section, desc))
    # TypeDoc repeats a comment on every type that inherits it, so the
    # schema.mdx rows drop any repeated statement.  schema.ts has each comment
    # once; the same sentence on two types (the resultType rule of several
    # results) is two statements.
    return schema_comment_records(relpath, comments, per_section=True)


def schema_ts_source(version_dir):
    """schema.ts of a folder if its doc comments carry @category tags, else None."""
    path = os.path.join(version_dir, "schema.ts")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        src = f.read()
    return path if re.search(r"^\s*\*\s*@category\s", src, re.M) else None


# ---------------------------------------------------------------------------
# Party / area guessing
# ---------------------------------------------------------------------------

PARTY_PATTERNS = [
    (
        "authorization-server",
        re.compile(
            r"\b(authorization servers?|authorization server endpoints|"
            r"openid providers?)\b"
        ),
    ),
    (
        "both",
        re.compile(
            r"\b(both parties|either party|either side|each party|all parties|"
            r"both sides|clients and servers|client and server|servers and clients|"
            r"server and client|senders and receivers|requestors and receivers|"
            r"all implementations|implementations?|implementers|implementors|sdks?|"
            r"requestors and receivers)\b"
        ),
    ),
    ("requestor", re.compile(r"\b(requestors?|requesters?|senders?)\b")),
    ("receiver", re.compile(r"\b(receivers?|recipients?)\b")),
    (
        "client",
        re.compile(
            r"\b(clients?|hosts?|host applications?|applications?|application uis?|"
            r"uis?|consumers?)\b"
        ),
    ),
    ("server", re.compile(r"\b(servers?|resource servers?)\b")),
    (
        "transport",
        re.compile(
            r"\b(transports?|stdio|sse streams?|streams?|event ids?|session ids?|"
            r"json-rpc messages|http (?:response|request|header)s?)\b"
        ),
    ),
]
PRONOUN_RE = re.compile(r"^\W*(then\s+)?(it|they|this|these|the party)\W*$", re.I)
COMPOUND_RE = re.compile(
    r"\b(?:client|server)[ _-](?:ids?|credentials?|secrets?|information|metadata|"
    r"registration|authentication|hostnames?|capabilit(?:y|ies)|side|urls?|uris?|"
    r"endpoints?|names?|identifiers?|implementation|certificates?|initiated)\b"
)
CONJ_ONLY_RE = re.compile(r"\s*(?:,\s*)?(?:and|or|and/or|as well as)?\s*(?:(?:the|an?|all|mcp)\s+)*")
CLAUSE_AND_RE = re.compile(r"\b(?:and|but)\s+(?:(?:the|an?|all|mcp)\s+)*$")


def actor_mentions(s):
    """[(start, end, party)] in order of appearance, plus the normalised text."""
    s = s.lower()
    s = re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), s)
    s = re.sub(r"\([^)]*\)", lambda m: " " * len(m.group(0)), s)
    s = re.sub(r"\b[\w-]+['\u2019]s?(?=\W)", lambda m: " " * len(m.group(0)), s)  # possessives
    s = COMPOUND_RE.sub(lambda m: " " * len(m.group(0)), s)
    mentions = []
    for name, rx in PARTY_PATTERNS:
        for m in rx.finditer(s):
            mentions.append((m.start(), m.end(), name))
        s = rx.sub(lambda m: " " * len(m.group(0)), s)
    mentions.sort()
    return mentions, s


def combine_parties(found):
    fs = set(found)
    if not fs:
        return ""
    if "both" in fs or {"client", "server"} <= fs or {"requestor", "receiver"} <= fs:
        return "both"
    if "authorization-server" in fs and len(fs) > 1:
        other = sorted(fs - {"authorization-server"})
        return "+".join([*other, "authorization-server"])
    return found[0]


def clause_party(text, first_only=False):
    """Party of the grammatical subject in text (the text before the keyword).

    Takes the head actor of the last clause ("... does not support PKCE and MCP
    clients" -> client) but ignores actors inside relative clauses ("receivers
    that cannot identify requestors" -> receiver); actors joined by and/or are
    combined ("Authorization servers and MCP clients").
    """
    ms, norm = actor_mentions(text)
    actors = [m for m in ms if m[2] != "transport"]
    if not actors:
        return "transport" if ms else ""
    start = 0
    if not first_only:
        for k in range(1, len(actors)):
            between = norm[actors[k - 1][1] : actors[k][0]]
            if not CONJ_ONLY_RE.fullmatch(between) and CLAUSE_AND_RE.search(between):
                start = k
    group = [actors[start]]
    k = start + 1
    while k < len(actors) and CONJ_ONLY_RE.fullmatch(norm[group[-1][1] : actors[k][0]]):
        group.append(actors[k])
        k += 1
    return combine_parties([g[2] for g in group])


def guess_party(rec: Record):
    kws = rec.own_kws
    inl = rec.inline
    own = rec.own_text()
    prefix = inl.restore(rec.own_raw[: kws[0][2]]) if kws else own
    if rec.prefix:
        # fragment: the subject is in the lead-in
        p = clause_party(rec.prefix + " " + prefix) or clause_party(rec.prefix)
        if p:
            return p
    subj = prefix
    if kws:
        # "MCP servers SHOULD and MCP clients MUST implement ..."
        after = inl.restore(rec.own_raw[kws[0][2] :])
        m = re.match(r"^\S+(?:\s+NOT)?\s+and\s+([^,]*?)\b(MUST|SHOULD|MAY)\b", after)
        if m:
            q = combine_parties([x[2] for x in actor_mentions(subj + " and " + m.group(1))[0] if x[2] != "transport"])
            if q:
                return q
    main = subj.rsplit(",", 1)[-1] if "," in subj else subj
    if ":" in main:
        main = main.rsplit(":", 1)[-1]
    if main.strip() and not PRONOUN_RE.match(main):
        p = clause_party(main)
        if p and p != "transport":
            return p
    p = clause_party(subj, first_only=bool(PRONOUN_RE.match(main)))
    if p and p != "transport":
        return p
    if kws:
        after = inl.restore(rec.own_raw[kws[0][2] :])
        # passive voice: "... MUST NOT be cancelled by clients"
        m = re.match(r"^\S+(?:\s+NOT)?\s+(?:only\s+)?be\s+\w+\s+(?:\w+\s+)?by\s+(.{0,40})", after)
        if m:
            q = clause_party(m.group(1), first_only=True)
            if q and q != "transport":
                return q
    if p == "transport" or rec.file.endswith("transports.mdx") or rec.file.startswith("basic/transports/"):
        return "transport"
    return "unknown"


def area_of(relpath):
    # 2026-07-28 splits these chapters into folders (basic/authorization/, basic/transports/)
    if (
        relpath.endswith("authorization.mdx")
        or relpath.startswith("basic/authorization/")
        or "security_best_practices" in relpath
    ):
        return "auth"
    if relpath.endswith("transports.mdx") or relpath.startswith("basic/transports/"):
        return "transport"
    return "protocol"


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def strip_frontmatter(src):
    title = ""
    if src.startswith("---"):
        end = src.find("\n---", 3)
        if end != -1:
            fm = src[3:end]
            m = re.search(r"^title:\s*(.*)$", fm, re.M)
            if m:
                title = m.group(1).strip().strip("\"'")
            # keep line numbering: replace front matter with blank lines
            src = "\n" * src[: end + 4].count("\n") + src[end + 4 :]
    return src, title


def extract_mdx(path, relpath):
    with open(path, encoding="utf-8") as f:
        src = f.read().replace("\t", "    ")
    src, _title = strip_frontmatter(src)
    lines = [(i + 1, text.rstrip("\n")) for i, text in enumerate(src.split("\n"))]
    blocks = parse_blocks(lines)
    ex = Extractor(relpath)
    ex.run(blocks)
    return ex.records


CHAPTER_ORDER = [
    "index.mdx",
    "architecture/",
    "basic/index.mdx",
    "basic/lifecycle.mdx",
    "basic/versioning.mdx",
    "basic/transports.mdx",
    "basic/transports/",
    "basic/authorization.mdx",
    "basic/authorization/",
    "basic/",
    "basic/utilities/",
    "basic/patterns/",
    "server/",
    "client/",
    "tasks.mdx",
    "deprecated.mdx",
    "changelog.mdx",
    "schema.mdx",
]


def chapter_sort_key(rel):
    for i, p in enumerate(CHAPTER_ORDER):
        if rel == p or (p.endswith("/") and rel.startswith(p) and (p != "basic/" or "/" not in rel[len(p) :])):
            return (i, rel)
    return (len(CHAPTER_ORDER), rel)


SKIP_FILES = {"changelog.mdx"}  # summarises changes; keywords there are not normative


def list_mdx(version_dir):
    out = []
    for root, _dirs, files in os.walk(version_dir):
        for fn in files:
            if fn.endswith(".mdx") and fn not in SKIP_FILES:
                full = os.path.join(root, fn)
                out.append(os.path.relpath(full, version_dir).replace(os.sep, "/"))
    return sorted(out, key=chapter_sort_key)


def clean(s):
    return re.sub(r"[\t\r\n]+", " ", s or "").strip()


REQ_COLUMNS = [
    "id",
    "file",
    "line",
    "area",
    "section",
    "keyword",
    "party",
    "text",
    "context",
    "keywords",
    "form",
    "fingerprint",
]


def chapter_records(version_dir):
    """(file, records) for each source file of a version folder, in catalogue order.

    Schema statements come from schema.mdx.  Where schema.mdx is missing or
    yields none (2026-07-28 has only a skeleton page; ext-tasks has none),
    they come from the doc comments of schema.ts instead, if these carry
    @category tags.
    """
    rels = list_mdx(version_dir)
    for rel in rels:
        full = os.path.join(version_dir, rel)
        if os.path.basename(rel) == "schema.mdx":
            recs = extract_schema_mdx(full, rel)
            ts = schema_ts_source(version_dir) if rel == "schema.mdx" and not recs else None
            if ts:
                rel, recs = "schema.ts", extract_schema_ts(ts, "schema.ts")
        else:
            recs = extract_mdx(full, rel)
        yield rel, recs
    if "schema.mdx" not in rels:
        ts = schema_ts_source(version_dir)
        if ts:
            yield "schema.ts", extract_schema_ts(ts, "schema.ts")


def requirement_rows(version_dir):
    rows = []
    for rel, recs in chapter_records(version_dir):
        chapter = re.sub(r"\.(mdx|ts)$", "", rel)
        for n, r in enumerate(recs, 1):
            text = r.text()
            all_kws = []
            for kw, _f, _p in find_keywords(text):
                if kw not in all_kws:
                    all_kws.append(kw)
            forms = {f for _k, f, _p in r.own_kws}
            form = forms.pop() if len(forms) == 1 else "mixed"
            rows.append(
                OrderedDict(
                    [
                        ("id", f"{chapter}#{n}"),
                        ("file", rel),
                        ("line", str(r.line)),
                        ("area", area_of(rel)),
                        ("section", clean(r.section)),
                        ("keyword", strongest(r.own_kws)),
                        ("party", guess_party(r)),
                        ("text", clean(text)),
                        ("context", clean(r.context)),
                        ("keywords", ";".join(all_kws)),
                        ("form", form),
                        ("fingerprint", hashlib.sha1(clean(text).encode("utf-8")).hexdigest()[:12]),
                    ]
                )
            )
    return rows


def write_tsv(path, columns, rows):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\t".join(columns) + "\n")
        for r in rows:
            f.write("\t".join(clean(r[c]) for c in columns) + "\n")


# ---------------------------------------------------------------------------
# methods.tsv from schema.json
# ---------------------------------------------------------------------------

METHOD_COLUMNS = [
    "method",
    "kind",
    "direction",
    "message_type",
    "params_type",
    "params_required",
    "params_fields",
    "result_type",
    "task_augmentable",
    "description",
]


def method_rows(version_dir):
    with open(os.path.join(version_dir, "schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    defs = schema.get("$defs") or schema.get("definitions") or {}

    def ref_name(node):
        ref = node.get("$ref", "")
        return ref.rsplit("/", 1)[-1] if ref else ""

    def union(name):
        node = defs.get(name, {})
        return [ref_name(x) for x in node.get("anyOf", node.get("oneOf", [])) if ref_name(x)]

    def alternatives(node, depth=0):
        """Object shapes a schema node can take: [(properties, required)].

        $ref is followed, allOf parts are merged, anyOf/oneOf branches are
        kept apart.
        """
        if depth > 12 or not isinstance(node, dict):
            return [({}, set())]
        if "$ref" in node:
            return alternatives(defs.get(ref_name(node), {}), depth + 1)
        base = [(dict(node.get("properties", {})), set(node.get("required", [])))]
        for part in node.get("allOf", []):
            merged = []
            for p1, r1 in base:
                for p2, r2 in alternatives(part, depth + 1):
                    merged.append(({**p1, **p2}, r1 | r2))
            base = merged
        branches = node.get("anyOf", node.get("oneOf"))
        if branches:
            out = []
            for p1, r1 in base:
                for br in branches:
                    for p2, r2 in alternatives(br, depth + 1):
                        out.append(({**p1, **p2}, r1 | r2))
            base = out
        return base

    sides = {
        ("request", "client"): union("ClientRequest"),
        ("request", "server"): union("ServerRequest"),
        ("notification", "client"): union("ClientNotification"),
        ("notification", "server"): union("ServerNotification"),
    }
    results = {"client": set(union("ClientResult")), "server": set(union("ServerResult"))}
    entries = OrderedDict()
    for (kind, side), names in sides.items():
        for name in names:
            key = (kind, name)
            entries.setdefault(key, set()).add(side)

    rows = []
    for (kind, name), senders in entries.items():
        node = defs.get(name, {})
        props = node.get("properties", {})
        method = props.get("method", {}).get("const", "")
        params = props.get("params", {})
        if not params:
            params_type = ""
        elif "$ref" in params:
            params_type = ref_name(params)
        else:
            params_type = "(inline)"
        params_required = "yes" if "params" in node.get("required", []) else "no"
        task = "no"
        fields = ""
        if params:
            variants = alternatives(params)
            if any("task" in props for props, _req in variants):
                task = "yes"
            names = []
            for props, _req in variants:
                for f in props:
                    if f not in names:
                        names.append(f)
            req = [f for f in names if all(f in r for _p, r in variants)]
            opt = [f for f in names if f not in req]
            opt.sort(key=lambda f: (f == "_meta", f))
            fields = ", ".join(sorted(req) + [f + "?" for f in opt])
        if senders == {"client", "server"}:
            direction = "both"
        elif senders == {"client"}:
            direction = "client->server"
        else:
            direction = "server->client"
        result = ""
        if kind == "request":
            receivers = set()
            if "client" in senders:
                receivers.add("server")
            if "server" in senders:
                receivers.add("client")
            allowed = set().union(*(results[r] for r in receivers))
            base = name[: -len("Request")] if name.endswith("Request") else name
            cand = base + "Result"
            if cand in defs and (cand in allowed or not allowed):
                result = cand
            elif "EmptyResult" in defs:
                result = "EmptyResult"
            else:
                result = "Result"
        desc = node.get("description", "")
        desc = re.split(r"(?<=[.!?])\s", desc.strip(), maxsplit=1)[0] if desc else ""
        rows.append(
            OrderedDict(
                [
                    ("method", method),
                    ("kind", kind),
                    ("direction", direction),
                    ("message_type", name),
                    ("params_type", params_type),
                    ("params_required", params_required),
                    ("params_fields", fields),
                    ("result_type", result),
                    ("task_augmentable", task),
                    ("description", desc),
                ]
            )
        )
    order = {"client->server": 0, "both": 1, "server->client": 2}
    rows.sort(key=lambda r: (r["kind"] != "request", order[r["direction"]], r["method"]))
    return rows


# ---------------------------------------------------------------------------


def default_version_dirs():
    here = os.path.dirname(os.path.abspath(__file__))
    for base in (os.path.join(here, "..", "spec"),):
        if os.path.isdir(base):
            ds = sorted(
                os.path.join(base, d)
                for d in os.listdir(base)
                if re.fullmatch(r"\d{4}-\d{2}-\d{2}", d) and os.path.isdir(os.path.join(base, d))
            )
            if ds:
                return [os.path.normpath(d) for d in ds]
    return []


def summary(rows, out=sys.stderr):
    kws = [
        "MUST",
        "MUST NOT",
        "REQUIRED",
        "SHALL",
        "SHALL NOT",
        "SHOULD",
        "SHOULD NOT",
        "RECOMMENDED",
        "NOT RECOMMENDED",
        "MAY",
        "OPTIONAL",
    ]
    per = OrderedDict()
    for r in rows:
        per.setdefault(r["file"], Counter())[r["keyword"]] += 1
    used = [k for k in kws if any(c[k] for c in per.values())]
    print("file\t" + "\t".join(used) + "\ttotal", file=out)
    tot = Counter()
    for f, c in per.items():
        tot.update(c)
        print(f + "\t" + "\t".join(str(c[k]) for k in used) + f"\t{sum(c.values())}", file=out)
    print("TOTAL\t" + "\t".join(str(tot[k]) for k in used) + f"\t{sum(tot.values())}", file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("version_dirs", nargs="*", help="spec version folder(s), e.g. spec/2025-11-25")
    ap.add_argument("--methods", action="store_true", help="also write methods.tsv (from schema.json) into each folder")
    ap.add_argument("--summary", action="store_true", help="print per-chapter keyword counts to stderr")
    ap.add_argument("--stdout", action="store_true", help="write requirements to stdout instead of requirements.tsv")
    args = ap.parse_args(argv)
    dirs = args.version_dirs or default_version_dirs()
    if not dirs:
        ap.error("no version folder given and none found next to the script")
    for d in dirs:
        rows = requirement_rows(d)
        if args.stdout:
            sys.stdout.write("\t".join(REQ_COLUMNS) + "\n")
            for r in rows:
                sys.stdout.write("\t".join(clean(r[c]) for c in REQ_COLUMNS) + "\n")
        else:
            out = os.path.join(d, "requirements.tsv")
            write_tsv(out, REQ_COLUMNS, rows)
            print(f"wrote {out} ({len(rows)} statements)", file=sys.stderr)
        if args.summary:
            summary(rows)
        if args.methods:
            mrows = method_rows(d)
            mout = os.path.join(d, "methods.tsv")
            write_tsv(mout, METHOD_COLUMNS, mrows)
            print(f"wrote {mout} ({len(mrows)} methods)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
