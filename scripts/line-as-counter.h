/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Forced into every C file of the zero-cost builds of series-check.sh
 * (KCFLAGS=-include): each __LINE__ becomes __COUNTER__, the number of
 * its use in the file, so lines a patch adds above a WARN() or a lock
 * class name do not change the object. As a system header, undefining
 * the builtin is not a warning (-Werror builds).
 */
#pragma GCC system_header
#undef __LINE__
#define __LINE__ __COUNTER__
