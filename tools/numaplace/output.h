/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: the output helpers the commands share.
 */
#ifndef NP_OUTPUT_H
#define NP_OUTPUT_H

#include <stdio.h>

/* @s as a JSON string, quoted and escaped. */
void np_json_str(FILE *f, const char *s);

#endif /* NP_OUTPUT_H */
