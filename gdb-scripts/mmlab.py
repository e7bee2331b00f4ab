# SPDX-License-Identifier: GPL-2.0
"""Load the mmlab gdb helpers (one module per structure) on UML or x86:
lx-mmu-gather, lx-anon-vma, lx-pgwalk, $mm_current(), mm-break, and
pretty-printers for struct mmu_gather and struct anon_vma."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mm_common  # noqa: E402,F401
import mm_gather  # noqa: E402,F401
import mm_anon_vma  # noqa: E402,F401
import mm_pgwalk  # noqa: E402,F401
import mm_break  # noqa: E402,F401
