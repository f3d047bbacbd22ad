// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON writer's unit test: escaping, byte for byte, and documents
 * as the commands build them. TAP on stdout; exits 1 on a failure.
 * check.sh also feeds the documents to python3 -m json.tool.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static int nr, failed;

static void expect(const char *what, const char *got, const char *want)
{
	nr++;
	if (!strcmp(got, want)) {
		printf("ok %d %s\n", nr, what);
		return;
	}
	failed++;
	printf("not ok %d %s\n# got:  %s\n# want: %s\n", nr, what, got, want);
}

/* json_escape(@in) into a string (static: one at a time). */
static const char *escaped(const char *in)
{
	static char *buf;
	size_t len;
	FILE *f;

	free(buf);
	f = open_memstream(&buf, &len);
	json_escape(f, in);
	fclose(f);
	return buf;
}

static const struct {
	const char *what, *in, *want;
} cases[] = {
	{ "plain ASCII as it is", "nop", "\"nop\"" },
	{ "empty string", "", "\"\"" },
	{ "quote", "say \"hi\"", "\"say \\\"hi\\\"\"" },
	{ "backslash", "a\\b", "\"a\\\\b\"" },
	{ "slash not escaped", "a/b", "\"a/b\"" },
	{ "the short escapes", "\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"" },
	{ "other control characters as \\u00XX", "\x01\x1f\x1b[0m",
	  "\"\\u0001\\u001f\\u001b[0m\"" },
	{ "DEL passes (JSON allows it)", "\x7f", "\"\x7f\"" },
	{ "UTF-8 passes through unchanged", "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x90\xb9",
	  "\"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x90\xb9\"" },
	{ "a failure message", "tag 3: status -125 ECANCELED (Operation canceled)",
	  "\"tag 3: status -125 ECANCELED (Operation canceled)\"" },
};

/* A document like run --json's, nested and with every value type. */
static const char *document(void)
{
	static char *buf;
	struct json j;
	size_t len;
	FILE *f;

	free(buf);
	f = open_memstream(&buf, &len);
	json_init(&j, f, false);
	json_object_begin(&j, NULL);
	json_string(&j, "kind", "spin");
	json_array_begin(&j, "args");
	json_u64(&j, NULL, 18446744073709551615ULL);
	json_s64(&j, NULL, -125);
	json_array_end(&j);
	json_array_begin(&j, "empty");
	json_array_end(&j);
	json_object_begin(&j, "lat");
	json_null(&j, "p50");
	json_bool(&j, "ok", true);
	json_bool(&j, "bad", false);
	json_object_end(&j);
	json_string(&j, "msg", "a \"b\"\n\xc3\xa9");
	json_object_end(&j);
	json_end(&j);
	fclose(f);
	return buf;
}

/* One line, as schedtrace --json writes them. */
static const char want_line[] =
	"{\"ms\": 20, \"runq_len\": [0, 5], \"empty\": {}, \"p\": {\"ok\": true}}\n";

static const char *line(void)
{
	static char *buf;
	struct json j;
	size_t len;
	FILE *f;

	free(buf);
	f = open_memstream(&buf, &len);
	json_init(&j, f, true);
	json_object_begin(&j, NULL);
	json_u64(&j, "ms", 20);
	json_array_begin(&j, "runq_len");
	json_u64(&j, NULL, 0);
	json_u64(&j, NULL, 5);
	json_array_end(&j);
	json_object_begin(&j, "empty");
	json_object_end(&j);
	json_object_begin(&j, "p");
	json_bool(&j, "ok", true);
	json_object_end(&j);
	json_object_end(&j);
	json_end(&j);
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	/* check.sh: print the documents, for python3 -m json.tool. */
	if (argc == 2 && !strcmp(argv[1], "--print")) {
		fputs(document(), stdout);
		fputs(line(), stdout);
		return 0;
	}
	printf("1..%zu\n", sizeof(cases) / sizeof(cases[0]) + 2);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect(cases[i].what, escaped(cases[i].in), cases[i].want);
	expect("a pretty document", document(),
	       "{\n"
	       "  \"kind\": \"spin\",\n"
	       "  \"args\": [\n"
	       "    18446744073709551615,\n"
	       "    -125\n"
	       "  ],\n"
	       "  \"empty\": [],\n"
	       "  \"lat\": {\n"
	       "    \"p50\": null,\n"
	       "    \"ok\": true,\n"
	       "    \"bad\": false\n"
	       "  },\n"
	       "  \"msg\": \"a \\\"b\\\"\\n\xc3\xa9\"\n"
	       "}\n");
	expect("a one-line document (JSON Lines)", line(), want_line);
	return failed ? 1 : 0;
}
