"""mmlab's host tooling, one package (scripts/mmlab; make runs its modules
as `python3 -m mmlab.NAME` with scripts/ on PYTHONPATH).

  conf     the machines and trees tables (machines.mk, trees.mk)
  outcome  exit codes, the summary line, messages, the splat patterns
  qemu     the one QEMU command builder (boot, bench, LAVA)
  series   a quilt series: its patches in order, KCIDB's patchset_hash
  manifest the guest tests' metadata (tests/manifest)
  boot, results, bench, lava, kcidb, mutate, kbuild, series_functions:
           what the make targets run
"""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
