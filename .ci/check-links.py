#!/usr/bin/env python3
"""Checks the user documentation's links, length and wording.

1. Every relative link in README.md, Migration/**/*.md, Benchmarks/*.md and the DocC articles
   (Sources/*/*.docc/**/*.md) resolves to a file or directory inside the repository, and a
   `#anchor` on a Markdown file names one of its headings (GitHub's heading anchors).
2. No link leaves the repository through a relative path (`../shared/…`), and no `http(s)://`
   link points at this project's own files somewhere else (a hosted copy of the repository):
   link the file in the repository instead.
3. README.md is at most 300 lines.
4. The user documentation (README.md, the DocC articles, Migration/) names no commit: no
   7–40-digit lowercase hex word with both a digit and a letter (`6541cc3`, `<f7cacb3>`).
   UUIDs, `0x…` literals and 64-digit digests do not match; ALLOWED_HEX lists any other word
   that only looks like a commit.
5. Every article of a DocC catalog is listed (`<doc:Name>`) on the catalog's landing page (the
   one titled with the module's symbol link).

Prints each miss as `path:line: what is wrong` and exits 1 when there is any.
"""
import os
import re
import sys
import unicodedata

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
README_MAX_LINES = 300
# Hex-looking words that are not commits (none yet); add one here with a comment saying what it is.
ALLOWED_HEX: set[str] = set()

LINK = re.compile(r'(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)')
REFERENCE_DEFINITION = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$', re.M)
AUTOLINK = re.compile(r'<(https?://[^>\s]+)>')
FENCE = re.compile(r'^\s{0,3}(```|~~~)')
HEADING = re.compile(r'^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
HEX_WORD = re.compile(r'(?<![0-9A-Za-z_])(?:0x)?[0-9a-f]{7,40}(?![0-9A-Za-z_])')
UUID = re.compile(r'[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}')
# A hosted copy of this repository: its name in a URL on a forge.
OWN_PROJECT_URL = re.compile(r'https?://[^/\s]*(github|gitlab|bitbucket|codeberg)[^/\s]*/[^)\s]*formdatakit', re.I)


def documents():
    """(path relative to the root, is user documentation) for every checked Markdown file."""
    found = []
    if os.path.exists(os.path.join(ROOT, 'README.md')):
        found.append(('README.md', True))
    for top, user in (('Migration', True), ('Benchmarks', False), ('Sources', True)):
        for directory, subdirectories, files in os.walk(os.path.join(ROOT, top)):
            subdirectories[:] = sorted(d for d in subdirectories if d not in ('.build', 'peers') or top != 'Benchmarks')
            relative = os.path.relpath(directory, ROOT)
            if top == 'Benchmarks' and relative != 'Benchmarks':
                continue
            if top == 'Sources' and '.docc' not in relative:
                continue
            for name in sorted(files):
                if name.endswith('.md'):
                    found.append((os.path.join(relative, name), user))
    return found


def prose_lines(text):
    """The text with fenced code blocks blanked (line numbers kept)."""
    lines = text.split('\n')
    inside = None
    out = []
    for line in lines:
        match = FENCE.match(line)
        if match:
            if inside is None:
                inside = match.group(1)
            elif match.group(1) == inside:
                inside = None
            out.append('')
            continue
        out.append('' if inside else line)
    return out


def without_code_spans(line):
    return re.sub(r'(`+)(.+?)\1', lambda m: ' ' * len(m.group(0)), line)


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', heading)  # a link's text only
    text = text.replace('`', '')
    text = re.sub(r'<[^>]+>', '', text)
    text = text.strip().lower()
    kept = []
    for ch in text:
        category = unicodedata.category(ch)
        if ch in '-_ ' or category[0] in ('L', 'N') or category == 'Mn':
            kept.append(ch)
    return ''.join(kept).replace(' ', '-')


ANCHOR_CACHE: dict[str, set[str]] = {}


def anchors(path):
    if path not in ANCHOR_CACHE:
        seen: dict[str, int] = {}
        result = set()
        with open(path, encoding='utf-8') as handle:
            for line in prose_lines(handle.read()):
                match = HEADING.match(line)
                if not match:
                    continue
                base = slug(match.group(2))
                count = seen.get(base, 0)
                result.add(base if count == 0 else f'{base}-{count}')
                seen[base] = count + 1
        ANCHOR_CACHE[path] = result
    return ANCHOR_CACHE[path]


def line_of(text, offset):
    return text.count('\n', 0, offset) + 1


def check_target(source, target, misses, where):
    if not target or target.startswith('mailto:'):
        return
    if re.match(r'^[a-z][a-z0-9+.-]*:', target, re.I):
        if target.startswith(('http://', 'https://')) and OWN_PROJECT_URL.search(target):
            misses.append(f'{where}: {target} points at this project outside the repository: link the file in the repository')
        return  # doc:, https: and the like: not a file of ours
    path_part, _, anchor = target.partition('#')
    base = os.path.dirname(os.path.join(ROOT, source))
    resolved = os.path.normpath(os.path.join(base, path_part)) if path_part else os.path.join(ROOT, source)
    if os.path.commonpath([resolved, ROOT]) != ROOT:
        misses.append(f'{where}: {target} leaves the repository')
        return
    if not os.path.exists(resolved):
        misses.append(f'{where}: {target} does not exist ({os.path.relpath(resolved, ROOT)})')
        return
    if anchor and resolved.endswith('.md') and os.path.isfile(resolved):
        if anchor.lower() not in anchors(resolved):
            misses.append(f'{where}: {target}: no heading with the anchor #{anchor} in {os.path.relpath(resolved, ROOT)}')


def check_document(source, user, misses):
    with open(os.path.join(ROOT, source), encoding='utf-8') as handle:
        text = handle.read()
    lines = prose_lines(text)
    prose = '\n'.join(without_code_spans(line) for line in lines)
    for match in LINK.finditer(prose):
        check_target(source, match.group(3), misses, f'{source}:{line_of(prose, match.start())}')
    for match in REFERENCE_DEFINITION.finditer(prose):
        check_target(source, match.group(1), misses, f'{source}:{line_of(prose, match.start())}')
    for match in AUTOLINK.finditer(prose):
        check_target(source, match.group(1), misses, f'{source}:{line_of(prose, match.start())}')
    if source == 'README.md':
        count = text.count('\n') + (0 if text.endswith('\n') else 1)
        if count > README_MAX_LINES:
            misses.append(f'README.md:{count}: {count} lines, more than {README_MAX_LINES}: move the detail into the DocC articles')
    if user:
        # Code included: a commit in a command line is still a commit.
        for number, line in enumerate(text.split('\n'), start=1):
            for match in HEX_WORD.finditer(UUID.sub(' ', line)):
                word = match.group(0)
                if word.startswith('0x') or word in ALLOWED_HEX:
                    continue
                if re.search(r'[0-9]', word) and re.search(r'[a-f]', word):
                    misses.append(f'{source}:{number}: "{word}" looks like a commit hash: user docs name no commits (history goes to Benchmarks/HISTORY.md)')


def check_catalogs(misses):
    for directory, subdirectories, _ in os.walk(os.path.join(ROOT, 'Sources')):
        for catalog in sorted(d for d in subdirectories if d.endswith('.docc')):
            path = os.path.join(directory, catalog)
            articles = {}
            for name in sorted(os.listdir(path)):
                if name.endswith('.md'):
                    with open(os.path.join(path, name), encoding='utf-8') as handle:
                        articles[name[:-3]] = handle.read()
            landing = [name for name, text in articles.items() if re.match(r'#\s*``[^`]+``', text)]
            if len(landing) != 1:
                misses.append(f'{os.path.relpath(path, ROOT)}: no single landing page (a page titled # ``Module``)')
                continue
            listed = set(re.findall(r'<doc:([A-Za-z0-9_-]+)', articles[landing[0]]))
            for name in articles:
                if name != landing[0] and name not in listed:
                    misses.append(f'{os.path.relpath(path, ROOT)}/{landing[0]}.md: the article {name} is not in its topics (<doc:{name}>)')


def main():
    misses: list[str] = []
    for source, user in documents():
        check_document(source, user, misses)
    check_catalogs(misses)
    for miss in misses:
        print(miss)
    if misses:
        print(f'{len(misses)} documentation problems', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
