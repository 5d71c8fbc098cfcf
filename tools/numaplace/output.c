// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the output helpers the commands share (output.h).
 */
#include <stdio.h>

#include "output.h"

void np_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}
