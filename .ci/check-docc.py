#!/usr/bin/env python3
"""Checks that public API documentation is in DocC form.

Every `public`/`open` function, initializer and subscript in Sources/ whose declaration takes
parameters, returns a value or throws has a `///` comment with, as DocC expects:
`- Parameter x:` / `- Parameters:` (one entry per parameter), `- Returns:` and `- Throws:`.
Prints each miss as `path:line: what is missing` and exits 1 when there is any.
(swift-format's ValidateDocumentationComments then checks that the sections match.)
"""
import os
import re
import sys

DECL = re.compile(r'^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*(?:public|open)\s+(?:(?:static|class|final|override|mutating|nonisolated|convenience|required)\s+)*(func|init|subscript)\b')


def declaration(lines, start):
    """The declaration text from `start` up to its body's `{` (or the line's end for protocol requirements)."""
    text = ''
    depth = 0
    for line in lines[start:start + 30]:
        for ch in line:
            if ch == '(':
                depth += 1
            elif ch == ')':
                depth -= 1
            elif ch == '{' and depth == 0:
                return text
            text += ch
        text += ' '
        if depth == 0 and not line.rstrip().endswith((',', '(', '->')) and '{' not in line and lines[start].strip().endswith(')'):
            return text
    return text


def closing_paren(decl):
    """The index of the `)` that closes the parameter list (the first `(`), or -1."""
    depth = 0
    for index in range(decl.find('('), len(decl)):
        if decl[index] == '(':
            depth += 1
        elif decl[index] == ')':
            depth -= 1
            if depth == 0:
                return index
    return -1


def parameters(decl):
    """Parameter names (the internal ones) of `decl`."""
    open_index = decl.find('(')
    if open_index < 0:
        return []
    depth = 0
    for index in range(open_index, len(decl)):
        if decl[index] == '(':
            depth += 1
        elif decl[index] == ')':
            depth -= 1
            if depth == 0:
                inner = decl[open_index + 1:index]
                break
    else:
        return []
    names = []
    depth = 0
    current = ''
    parts = []
    for index, ch in enumerate(inner):
        if ch in '([<':
            depth += 1
        elif ch in ')]' or (ch == '>' and (index == 0 or inner[index - 1] != '-')):
            depth -= 1
        if ch == ',' and depth == 0:
            parts.append(current)
            current = ''
        else:
            current += ch
    if current.strip():
        parts.append(current)
    for part in parts:
        head = part.split(':', 1)[0].strip().split()
        if head:
            names.append(head[-1])
    return names


def main():
    misses = []
    for root, _, files in os.walk('Sources'):
        for name in sorted(files):
            if not name.endswith('.swift'):
                continue
            path = os.path.join(root, name)
            lines = open(path, encoding='utf-8').read().split('\n')
            for number, line in enumerate(lines):
                match = DECL.match(line)
                if not match:
                    continue
                decl = declaration(lines, number)
                # Operators and RawRepresentable's init are documented by their protocols.
                if re.search(r'\bfunc\s+[^A-Za-z_\s]', decl) or re.search(r'\binit\(\s*rawValue\s*:', decl):
                    continue
                doc = []
                above = number - 1
                while above >= 0 and (lines[above].strip().startswith('///') or lines[above].strip().startswith('@')):
                    if lines[above].strip().startswith('///'):
                        doc.insert(0, lines[above].strip()[3:].strip())
                    above -= 1
                text = '\n'.join(doc)
                params = [p for p in parameters(decl) if p != '_']
                after_params = decl[closing_paren(decl) + 1:] if '(' in decl else decl
                throws = re.search(r'\b(throws|rethrows)\b', after_params.split('->')[0]) is not None
                returns = '->' in after_params and not re.search(r'->\s*(Void|\(\))\s*(where|$)', after_params.strip())
                if match.group(1) == 'init':
                    returns = False
                missing = []
                if not doc:
                    missing.append('a documentation comment')
                else:
                    documented = set(re.findall(r'-\s+Parameter\s+(\w+)\s*:', text))
                    documented |= set(re.findall(r'^\s*-\s+(\w+)\s*:', text, re.M)) if re.search(r'-\s+Parameters\s*:', text) else set()
                    for param in params:
                        if param not in documented:
                            missing.append(f'- Parameter {param}:')
                    if returns and not re.search(r'-\s+Returns\s*:', text):
                        missing.append('- Returns:')
                    if throws and not re.search(r'-\s+Throws\s*:', text):
                        missing.append('- Throws:')
                if missing:
                    misses.append(f'{path}:{number + 1}: {", ".join(missing)}')
    for miss in misses:
        print(miss)
    if misses:
        print(f'{len(misses)} public declarations lack DocC sections', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
