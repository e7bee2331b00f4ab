"""A quilt series: the patches in the order they apply."""
import hashlib
import os


def patches(series_file):
    """The patch names of a quilt series file, in order."""
    with open(series_file) as f:
        return [l.split()[0] for l in f if l.strip() and not l.lstrip().startswith('#')]


def sha256_of(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def patchset_hash(patch_dir, series_file=None):
    """KCIDB's patchset_hash of a quilt series: sha256 over the
    newline-terminated sha256 of each patch, in the order they apply."""
    names = patches(series_file or os.path.join(patch_dir, 'series'))
    hashes = ''.join(sha256_of(os.path.join(patch_dir, p)) + '\n' for p in names)
    return hashlib.sha256(hashes.encode()).hexdigest()
