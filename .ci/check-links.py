#!/usr/bin/env python3
"""Every relative link and anchor in the repository's Markdown resolves.

A small script rather than an npm link checker: it needs nothing installed (CI runs it in a
second), it checks anchors under both slug rules the docs are read with (GitHub's, and
Python-Markdown's `toc` as MkDocs builds docs/ by default), and it knows that the MkDocs site
holds docs/ alone, so a page there may not link outside it. External (http, mailto) links are
not fetched: CI has no network to fetch them with.

Usage: .ci/check-links.py [ROOT]   (exit status 1 and one line per broken link)
"""
import os
import re
import sys
import unicodedata

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..'))
SKIP_DIRS = {'.git', 'target', 'node_modules', 'site', '.mvn'}
LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
REF_DEF = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*(\S+)', re.M)
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
HTML_ID = re.compile(r'<a\s+(?:id|name)="([^"]+)"')


def strip_code(text):
    """Text outside fenced blocks and inline code, line structure kept."""
    out, fence = [], None
    for line in text.split('\n'):
        m = re.match(r'^\s*(`{3,}|~{3,})', line)
        if m:
            if fence is None:
                fence = m.group(1)[0]
            elif m.group(1)[0] == fence:
                fence = None
            out.append('')
            continue
        out.append('' if fence else re.sub(r'`+[^`]*`+', '``', line))
    return out


def heading_texts(text):
    fence = None
    for line in text.split('\n'):
        m = re.match(r'^\s*(`{3,}|~{3,})', line)
        if m:
            fence = None if fence == m.group(1)[0] else (fence or m.group(1)[0])
            continue
        if fence is None:
            h = HEADING.match(line)
            if h:
                # rendered text: links keep their text, emphasis and code marks go
                t = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', h.group(2))
                yield re.sub(r'[*_`]', lambda c: '' if c.group() != '_' else '_', t).replace('`', '')


def github_slug(text):
    s = re.sub(r'[^\w\- ]', '', text.lower().replace('`', ''))
    return s.replace(' ', '-')


def mkdocs_slug(text):
    s = unicodedata.normalize('NFKD', text.replace('`', '')).encode('ascii', 'ignore').decode('ascii')
    s = re.sub(r'[^\w\s-]', '', s).strip().lower()
    return re.sub(r'[-\s]+', '-', s)


def anchors(text, slug, dup_sep):
    seen, out = {}, set(HTML_ID.findall(text))
    for t in heading_texts(text):
        base = slug(t)
        n = seen.get(base, 0)
        out.add(base if n == 0 else f'{base}{dup_sep}{n}')
        seen[base] = n + 1
    return out


def main():
    docs = os.path.join(ROOT, 'docs')
    cache, errors, links = {}, [], 0

    def read(path):
        if path not in cache:
            with open(path, encoding='utf-8') as f:
                cache[path] = f.read()
        return cache[path]

    for base, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            if not name.endswith('.md'):
                continue
            path = os.path.join(base, name)
            rel = os.path.relpath(path, ROOT)
            text = read(path)
            lines = strip_code(text)
            targets = []
            for no, line in enumerate(lines, 1):
                targets += [(no, m.group(1)) for m in LINK.finditer(line)]
            targets += [(text[:m.start()].count('\n') + 1, m.group(1)) for m in REF_DEF.finditer('\n'.join(lines))]
            for no, target in targets:
                if re.match(r'^[a-z][a-z0-9+.-]*:', target, re.I):
                    continue  # http:, https:, mailto:
                links += 1
                where = f'{rel}:{no}: {target}'
                file_part, _, frag = target.partition('#')
                dest = os.path.normpath(os.path.join(base, file_part)) if file_part else path
                if not os.path.exists(dest):
                    errors.append(f'{where}: no such file')
                    continue
                in_site = path.startswith(docs + os.sep)
                if in_site and not dest.startswith(docs + os.sep) and dest != docs:
                    errors.append(f'{where}: a page of the MkDocs site (docs/) links outside it')
                    continue
                if not frag:
                    continue
                if not dest.endswith('.md'):
                    errors.append(f'{where}: an anchor into a file that is not Markdown')
                    continue
                dest_text = read(dest)
                if frag not in anchors(dest_text, github_slug, '-'):
                    errors.append(f'{where}: no heading with that anchor (GitHub)')
                elif dest.startswith(docs + os.sep) and frag not in anchors(dest_text, mkdocs_slug, '_'):
                    errors.append(f'{where}: the anchor differs in MkDocs (Python-Markdown toc); '
                                  'simplify the heading')
    for e in errors:
        print(e)
    print(f'check-links: {links} relative links, {len(errors)} broken', file=sys.stderr)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
