// SPDX-License-Identifier: GPL-2.0
/*
 * tb-mark: send one test marker on the wire (lib/mark.h), for the suite's
 * begin and end of each test: tb-mark KIND ID [KEY=VALUE ...]
 */
#include "lib/mark.h"

int main(int argc, char **argv)
{
	char rest[400] = "";
	size_t n = 0;
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: %s KIND ID [KEY=VALUE ...]\n", argv[0]);
		return 2;
	}
	for (i = 3; i < argc && n < sizeof(rest); i++)
		n += snprintf(rest + n, sizeof(rest) - n, "%s%s", i > 3 ? " " : "",
			      argv[i]);
	if (tb_mark(argv[1], argv[2], argc > 3 ? "%s" : NULL, rest)) {
		fprintf(stderr, "%s: no marker sent (no %s?)\n", argv[0],
			TB_MARK_ENV);
		return 1;
	}
	return 0;
}
