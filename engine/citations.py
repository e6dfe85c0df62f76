"""Rule citations in words, for the people at the table (issue 21, 8).

The code and ``docs/rules.md`` cite the rule texts by the project's seed files and numbers
(``001 stud 5``, ``002 3.6``, ``RRoP stud 7``) and the architecture brief (``DESIGN (sequence
numbers)``); a dealer reads "Robert's Rules, seven-card stud, rule 5".  ``cite`` turns a clause
into those words, ``in_words`` does it to the bracketed rules in a refusal's reason (and drops the
engine's own invariant ids, ``[engine.show]``).  Which seed is which: ``../shared/seeds/README.md``
(001 and 002 are Robert's Rules as published; 000 is a web copy numbered differently; 002 8.1 is
the stud section, the same rules 001 numbers).  This is the one table of those words.
"""

from __future__ import annotations

import re

ROBERTS = "Robert's Rules"

#: the rule books of the stud games, by the word the clauses use
BOOKS = {"stud": "seven-card stud", "stud high-low": "seven-card stud high-low", "stud-8": "seven-card stud high-low",
         "stud8": "seven-card stud high-low", "razz": "razz"}

#: Robert's Rules' numbered sections (002), by their titles
SECTIONS = {
    "2.1": "house policies, decision making", "2.2": "house policies, procedures", "2.3": "house policies, seating",
    "3.1": "the buy-in", "3.2": "misdeals", "3.3": "dead hands", "3.4": "irregularities",
    "3.5": "betting and raising", "3.6": "the showdown", "3.7": "ties", "8.1": "seven-card stud",
}

#: the architecture brief's principles (DESIGN), as the dealer is told them
STUDTABLE = {
    "sensors may fail mid-game": "studtable: sensor offline",
    "sequence numbers": "studtable: messages counted in sequence",
    "trust boundaries": "studtable: each device sends only on its own channel",
    "an input is acknowledged only once it is durable": "studtable: an input is stored before it is taken",
    "unknown tag": "studtable: a card tag not in the enrolled deck",
    "secrets": "studtable: hole cards stay secret",
}

_STUD = re.compile(r"^(?:(?P<src>00\d|RRoP)\s+)?(?P<book>stud high-low|stud-8|stud8|stud|razz)\s+"
                   r"(?P<num>\d+(?:\s*[-,]\s*\d+)*)(?P<rest>.*)$")
_SECTION = re.compile(r"^(?:(?P<src>00\d|RRoP)\s+)?(?P<sec>\d+\.\d+)(?P<rest>.*)$")
_DESIGN = re.compile(r"^DESIGN\s*(?:\((?P<what>[^)]*)\))?\s*(?P<rest>.*)$")
_BRACKETED = re.compile(r"\s*\[(?P<inner>[^\]]+)\]")
_BARE = re.compile(r"\b(?:RRoP|DESIGN)\b")


def _rest(rest: str) -> str:
    rest = rest.strip().strip(":").strip()
    if not rest:
        return ""
    return f" {rest}" if rest.startswith("(") else f" ({rest})"


def _part(part: str) -> tuple[str, str] | None:
    """One clause as (kind, words), kind ``stud``, ``web``, ``section``, ``stud-section`` or ``studtable``."""
    part = part.strip()
    m = _STUD.match(part)
    if m:
        book = BOOKS[m["book"]]
        num = re.sub(r"\s*,\s*", ", ", m["num"])
        rules = "rules" if re.search(r"[-,]", num) else "rule"
        web = m["src"] == "000"
        edition = " (web edition)" if web else ""
        return ("web" if web else "stud"), f"{book}{edition}, {rules} {num}{_rest(m['rest'])}"
    m = _SECTION.match(part)
    if m and m["sec"] in SECTIONS:
        rest = m["rest"]
        letters = re.match(r"^(\([a-z]\)(?:\s*,\s*\([a-z]\))*)(.*)$", rest)
        sec = m["sec"]
        if letters:
            sec, rest = sec + letters[1].replace(" ", ""), letters[2]
        kind = "stud-section" if m["sec"] == "8.1" else "section"
        return kind, f"{SECTIONS[m['sec']]}, section {sec}{_rest(rest)}"
    m = _DESIGN.match(part)
    if m:
        what = (m["what"] or m["rest"] or "").strip()
        return "studtable", STUDTABLE.get(what, f"studtable: {what}" if what else "studtable")
    return None


def cite(clause: str) -> str:
    """The clause in words: ``001 stud 5; 002 8.1; 000 stud 1`` -> "Robert's Rules, seven-card stud,
    rule 5"; ``DESIGN (sensors may fail mid-game)`` -> "studtable: sensor offline"; "" if none.
    A web copy's number (000) or the stud section (002 8.1) is left out when 001 numbers the rule."""
    parsed = [(p, _part(p)) for p in re.split(r";|,\s*(?=\d+\.\d)", clause) if p.strip()]
    kinds = {got[0] for _, got in parsed if got}
    out: list[str] = []
    for raw, got in parsed:
        if got is None:
            words = raw.strip()
            if words and not _BARE.search(words) and not re.match(r"^00\d\b", words):
                out.append(words)  # already words
            continue
        kind, words = got
        if kind in ("web", "stud-section") and "stud" in kinds:
            continue
        if kind != "studtable":
            words = words if any(w.startswith(ROBERTS) for w in out) else f"{ROBERTS}, {words}"
        if words not in out:
            out.append(words)
    return "; ".join(out)


def in_words(text: str) -> str:
    """A refusal's reason with its bracketed rule in words (``[RRoP stud 10]`` -> "[Robert's Rules,
    seven-card stud, rule 10]"); the engine's own invariant ids (``[engine.show]``) are dropped."""

    def one(m: re.Match[str]) -> str:
        inner = m["inner"].strip()
        if inner.startswith("engine."):
            return ""
        words = cite(inner)
        return f" [{words}]" if words and words != inner else m[0]

    return _BRACKETED.sub(one, text)
