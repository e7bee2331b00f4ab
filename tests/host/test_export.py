#!/usr/bin/python3
"""make series-export (scripts/series-export.sh): the series as mail,
signed off by the repository's git identity.

With a temporary identity (a scratch repository's own git config, none of
yours read) it exports patches/: every file named as git format-patch
names it, From: and Signed-off-by: that identity, [PATCH nn/NN], the
changelog and diff otherwise as in patches/, and a cover letter with the
base, the shortlog and the diffstat, whose measured numbers are all in
docs/measurements.md or docs/bench.md. With a placeholder identity it
exits 2 before writing anything, naming the fix (git config user.name).
A scratch series checks the file names on awkward subjects and that
checkpatch's findings fail the export while an unknown commit id does
not. checkpatch needs the tree (KSRC, else build/src): without it the
export runs with CHECKPATCH=0 and the checkpatch cases skip, saying so;
git am of the export needs the tree's pristine tag (GITDIR, else
build/tree.git).

usage: python3 -m unittest tests/host/test_export.py
"""
import os
import re
import shutil
import subprocess
import tempfile
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, 'scripts', 'series-export.sh')
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
from mmlab import conf  # noqa: E402
# the tree in use (MMLAB_TREE, else the release's), its series and build
PATCHES = conf.patches_dir(ROOT)
KSRC = os.environ.get('KSRC') or os.path.join(conf.build_dir(ROOT), 'src')
GITDIR = os.environ.get('GITDIR') or os.path.join(conf.build_dir(ROOT), 'tree.git')
HAVE_CHECKPATCH = os.path.isfile(os.path.join(KSRC, 'scripts', 'checkpatch.pl'))
NO_CHECKPATCH = f'no kernel tree at {KSRC} (make tree): checkpatch not run'
PLACEHOLDER = 'mmlab <mmlab@localhost>'
NAME, EMAIL = 'Jane Hacker', 'jane.hacker@kernel.org'
IDENT = f'{NAME} <{EMAIL}>'


def have_pristine():
    return subprocess.run(['git', '--git-dir', GITDIR, 'rev-parse', '-q', '--verify', 'pristine^{commit}'],
                          capture_output=True).returncode == 0


def git_env(home):
    """The environment with none of the user's git configuration: no
    global or system file, no GIT_* variable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith('GIT_')}
    env.update(HOME=home, XDG_CONFIG_HOME=home, GIT_CONFIG_NOSYSTEM='1',
               GIT_CONFIG_GLOBAL=os.path.join(home, 'gitconfig'))
    return env


def git(cwd, *args, env):
    return subprocess.run(['git', '-C', cwd, *args], env=env, capture_output=True, text=True, check=True).stdout


def identity_repo(tmp, name, email):
    """A scratch repository whose git config gives NAME and EMAIL (None:
    not set)."""
    env = git_env(tmp)
    repo = os.path.join(tmp, 'id')
    os.makedirs(repo)
    git(repo, 'init', '-q', env=env)
    if name is not None:
        git(repo, 'config', 'user.name', name, env=env)
    if email is not None:
        git(repo, 'config', 'user.email', email, env=env)
    return repo, env


def export(tmp, repo, env, patches=PATCHES, checkpatch=HAVE_CHECKPATCH, gitdir=GITDIR):
    out = os.path.join(tmp, 'export')
    e = dict(env, CHECKPATCH='1' if checkpatch else '0')
    r = subprocess.run([SCRIPT, repo, patches, out, KSRC, gitdir], env=e, capture_output=True, text=True)
    return r, out


def series(patches=PATCHES):
    with open(os.path.join(patches, 'series')) as f:
        return [l.split()[0] for l in f if l.strip() and not l.startswith('#')]


def header_subject(path):
    """The Subject: of a patch in patches/, without its [PATCH]."""
    with open(path) as f:
        for line in f:
            if line.startswith('Subject: '):
                return line[len('Subject: '):].rstrip('\n').removeprefix('[PATCH] ')
    raise AssertionError(f'{path}: no Subject:')


def format_patch_names(tmp, subjects):
    """The file names git format-patch gives commits with these subjects."""
    env = git_env(tmp)
    repo = os.path.join(tmp, 'fp')
    os.makedirs(repo)
    git(repo, 'init', '-q', env=env)
    for s in subjects:
        subprocess.run(['git', '-C', repo, '-c', 'user.name=a', '-c', 'user.email=a@b', '-c', 'commit.gpgsign=false',
                        'commit', '-q', '--allow-empty', '--cleanup=verbatim', '-F', '-'], input=s + '\n', env=env,
                       encoding='utf-8', check=True)
    out = os.path.join(tmp, 'fp-out')
    git(repo, 'format-patch', '-q', '--cover-letter', '-o', out, '--root', 'HEAD', env=env)
    return sorted(os.listdir(out))


class Export(unittest.TestCase):
    """The repository's series, exported once with a temporary identity."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        repo, cls.env = identity_repo(cls.tmp.name, NAME, EMAIL)
        cls.r, cls.out = export(cls.tmp.name, repo, cls.env)
        cls.patches = series()
        cls.n = len(cls.patches)
        cls.files = sorted(os.listdir(cls.out)) if os.path.isdir(cls.out) else []

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def read(self, name):
        with open(os.path.join(self.out, name)) as f:
            return f.read()

    def test_exit_0_a_cover_letter_and_every_patch(self):
        self.assertEqual(self.r.returncode, 0, self.r.stdout + self.r.stderr)
        self.assertEqual(len(self.files), self.n + 1)
        self.assertEqual(self.files[0], '0000-cover-letter.patch')

    def test_named_as_git_format_patch_names_them(self):
        subjects = [header_subject(os.path.join(PATCHES, p)) for p in self.patches]
        with tempfile.TemporaryDirectory() as t:
            self.assertEqual(self.files, format_patch_names(t, subjects))

    def test_each_patch_is_the_series_patch_signed_off_by_the_identity(self):
        width = len(str(self.n))
        for i, (p, name) in enumerate(zip(self.patches, self.files[1:]), 1):
            with self.subTest(patch=p):
                with open(os.path.join(PATCHES, p)) as f:
                    src = f.read()
                got = self.read(name)
                self.assertNotIn('mmlab@localhost', got)
                head, _, _ = got.partition('\n\n')
                self.assertIn(f'\nFrom: {IDENT}\n', '\n' + head + '\n')
                subject = f'Subject: [PATCH {i:0{width}d}/{self.n}] {header_subject(os.path.join(PATCHES, p))}'
                self.assertIn('\n' + subject + '\n', '\n' + head + '\n')
                # every sign-off of the placeholder is now the identity's
                self.assertEqual(got.count(f'\nSigned-off-by: {IDENT}\n'),
                                 src.count(f'\nSigned-off-by: {PLACEHOLDER}\n'))
                self.assertGreater(got.count(f'\nSigned-off-by: {IDENT}\n'), 0)
                # the changelog and the diff as in patches/, a diffstat
                # between them
                log, _, diff = src.partition('\n---\n')
                glog, _, gdiff = got.partition('\n---\n')
                want_log = log.replace(f'From: {PLACEHOLDER}', f'From: {IDENT}', 1).replace(
                    f'Signed-off-by: {PLACEHOLDER}', f'Signed-off-by: {IDENT}')
                self.assertEqual(glog.split('\n\n', 1)[1], want_log.split('\n\n', 1)[1])
                stat, _, rest = gdiff.partition('\n\n')
                self.assertEqual(rest, diff)
                self.assertRegex(stat, r'(?m)^ \d+ files? changed')

    def test_the_cover_letter(self):
        cover = self.read('0000-cover-letter.patch')
        width = len(str(self.n))
        self.assertTrue(cover.startswith(f'From: {IDENT}\nSubject: [PATCH {0:0{width}d}/{self.n}] '), cover[:200])
        self.assertNotIn('mmlab@localhost', cover)
        tree = conf.tree()
        self.assertIn(f'Linux {tree["version"]}.{tree["sublevel"]}', cover)
        self.assertIn('linux-source-6.1', cover)
        self.assertIn(f'\n{NAME} ({self.n}):\n', cover)
        for p in self.patches:
            # the shortlog wraps at 72 columns
            words = header_subject(os.path.join(PATCHES, p)).split()
            self.assertRegex(cover, r'\n  ' + r'\s+'.join(map(re.escape, words)) + r'\n')
        self.assertRegex(cover, r'\n \d+ files changed, \d+ insertions\(\+\), \d+ deletions\(-\)\n')

    def test_the_cover_letter_quotes_only_numbers_the_docs_have(self):
        docs = ''
        for d in ('measurements.md', 'bench.md'):
            with open(os.path.join(ROOT, 'docs', d)) as f:
                docs += f.read()
        have = set(re.findall(r'\d+(?:\.\d+)?', docs))
        with open(os.path.join(PATCHES, 'cover-letter.txt')) as f:
            text = f.read()
        if 'Measurements' not in text:
            self.skipTest(f'{PATCHES}/cover-letter.txt quotes no measurements yet')
        # from the measurements on, less version numbers (6.1.192)
        measured = re.sub(r'\d+\.\d+\.\d+', '', text[text.index('Measurements'):])
        # the numbers that are measurements: 3 digits or more, or a fraction
        numbers = [n for n in re.findall(r'\d+(?:\.\d+)?', measured) if len(n) >= 3 or '.' in n]
        self.assertGreater(len(numbers), 10)
        self.assertEqual([n for n in numbers if n not in have], [])

    @unittest.skipUnless(HAVE_CHECKPATCH, NO_CHECKPATCH)
    def test_checkpatch_clean(self):
        self.assertIn('checkpatch --strict clean', self.r.stdout)
        self.assertEqual(len(re.findall(r'(?m)^  ok   \d{4}-', self.r.stdout)), self.n, self.r.stdout)

    @unittest.skipUnless(have_pristine(), f'no pristine tag in {GITDIR} (make tree)')
    def test_git_am_applies_the_export_with_the_identity_as_author(self):
        with tempfile.TemporaryDirectory() as t:
            env = git_env(t)
            repo = os.path.join(t, 'am')
            os.makedirs(repo)
            git(repo, 'init', '-q', env=env)
            touched = set()
            for p in self.patches:
                touched.update(l.split('\t')[2] for l in git(
                    repo, 'apply', '--numstat', os.path.join(PATCHES, p), env=env).splitlines())
            have = subprocess.run(['git', '--git-dir', GITDIR, 'ls-tree', '-r', '--name-only', 'pristine', '--',
                                   *sorted(touched)], capture_output=True, text=True, check=True).stdout.split()
            tar = subprocess.run(['git', '--git-dir', GITDIR, 'archive', 'pristine', '--', *have],
                                 capture_output=True, check=True).stdout
            subprocess.run(['tar', '-x', '-C', repo], input=tar, check=True)
            ci = ['-c', 'user.name=x', '-c', 'user.email=x@y', '-c', 'commit.gpgsign=false']
            git(repo, 'add', '-A', env=env)
            git(repo, *ci, 'commit', '-q', '-m', 'pristine', env=env)
            git(repo, *ci, 'am', '-q', *[os.path.join(self.out, f) for f in self.files[1:]], env=env)
            authors = git(repo, 'log', '--format=%an <%ae>', f'-{self.n}', env=env).split('\n')[:-1]
            self.assertEqual(authors, [IDENT] * self.n)


class Placeholder(unittest.TestCase):
    """An identity that is not the submitter's: exit 2, the fix named,
    nothing written."""
    IDENTITIES = [
        (None, None), (NAME, None), (None, EMAIL),
        ('mmlab', EMAIL), ('MMLab', EMAIL), (NAME, 'mmlab@localhost'), (NAME, 'jane'),
        (NAME, 'jane@example.com'), (NAME, 'jane@EXAMPLE.org'), (NAME, 'jane@host.invalid'),
        (NAME, 'maintainers@users.noreply.a-seed-e0914b1e.example'),
        (NAME, '1234+jane@users.noreply.github.com'), (NAME, 'no-reply@kernel.org'),
        (NAME, 'jane@box.localdomain'),
    ]

    def test_refused_with_exit_2_naming_the_fix(self):
        for name, email in self.IDENTITIES:
            with self.subTest(name=name, email=email), tempfile.TemporaryDirectory() as t:
                repo, env = identity_repo(t, name, email)
                r, out = export(t, repo, env, checkpatch=False)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn('mmlab:   fix: git', r.stderr)
                self.assertIn('config user.name', r.stderr)
                self.assertFalse(os.path.exists(out), 'it wrote before refusing')


def write_series(d, patches, cover='Subject: a scratch series\n\nIts text.\n'):
    """A scratch series in d: [(SUBJECT, CHANGELOG, ADDED LINE)], each
    patch adding a line to a file of its own."""
    os.makedirs(d)
    names = []
    for i, (subject, log, line) in enumerate(patches, 1):
        name = f'{i:04d}-p.patch'
        names.append(name)
        with open(os.path.join(d, name), 'w', encoding='utf-8') as f:
            f.write(f'From: {PLACEHOLDER}\nSubject: [PATCH] {subject}\n\n{log}\n\n'
                    f'Signed-off-by: {PLACEHOLDER}\n---\n--- a/mm/f{i}.c\n+++ b/mm/f{i}.c\n'
                    f'@@ -1,1 +1,2 @@\n int a{i};\n+{line}\n')
    with open(os.path.join(d, 'series'), 'w') as f:
        f.write('# a scratch series\n' + ''.join(n + '\n' for n in names))
    with open(os.path.join(d, 'cover-letter.txt'), 'w') as f:
        f.write(cover)


class ScratchSeries(unittest.TestCase):
    SUBJECTS = ['mm: a.. b... c', '  leading spaces: kept out', 'trailing dots...', 'x' * 100,
                'na\u00efve: UTF-8 in a subject', '[RFC] brackets (parens) \'quotes\' "more"',
                'mm/rmap: skip batched TLB flush for inaccessible PTEs']

    def test_file_names_are_git_format_patch_s(self):
        with tempfile.TemporaryDirectory() as t:
            d = os.path.join(t, 'patches')
            write_series(d, [(s, 'Why.', f'int b{i};') for i, s in enumerate(self.SUBJECTS)])
            repo, env = identity_repo(t, NAME, EMAIL)
            r, out = export(t, repo, env, patches=d, checkpatch=False, gitdir=os.path.join(t, 'none'))
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertEqual(sorted(os.listdir(out)), format_patch_names(t, [s.strip() for s in self.SUBJECTS]))
            self.assertIn('checkpatch not run (CHECKPATCH=0)', r.stdout)
            with open(os.path.join(out, '0000-cover-letter.patch')) as f:
                cover = f.read()
            # no pristine tree: the sum of the patches' own diffstats, said so
            self.assertIn(' 7 files changed, 7 insertions(+)', cover)
            self.assertIn("the sum of the patches' own diffstats", cover)

    @unittest.skipUnless(HAVE_CHECKPATCH, NO_CHECKPATCH)
    def test_checkpatch_findings_fail_it_but_unknown_commit_ids_do_not(self):
        with tempfile.TemporaryDirectory() as t:
            d = os.path.join(t, 'patches')
            write_series(d, [('mm: cite a commit', 'As commit 0123456789ab ("mm: an older change") did.',
                              'int b;')])
            repo, env = identity_repo(t, NAME, EMAIL)
            r, _ = export(t, repo, env, patches=d, gitdir=os.path.join(t, 'none'))
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn('ok   0001-mm-cite-a-commit.patch (1 unknown commit ids)', r.stdout)
        with tempfile.TemporaryDirectory() as t:
            d = os.path.join(t, 'patches')
            write_series(d, [('mm: a good one', 'Why.', 'int b;'),
                             ('mm: trailing white space', 'Why.', 'int c; ')])
            repo, env = identity_repo(t, NAME, EMAIL)
            r, _ = export(t, repo, env, patches=d, gitdir=os.path.join(t, 'none'))
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn('ok   0001-mm-a-good-one.patch', r.stdout)
            self.assertIn('FAIL 0002-mm-trailing-white-space.patch', r.stdout)
            self.assertRegex(r.stdout, r'ERROR:TRAILING_WHITESPACE')
            self.assertIn('checkpatch --strict finds problems in 1 of 2 patches', r.stdout)


if __name__ == '__main__':
    unittest.main()
