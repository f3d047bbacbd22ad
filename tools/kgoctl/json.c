// SPDX-License-Identifier: GPL-2.0
/*
 * kgoctl's JSON writer. It only writes: nothing in kgoctl reads JSON.
 * Misuse (an end without its begin, nesting deeper than the writer
 * keeps) is a bug in kgoctl, and ends it with a message rather than
 * with a document a script would half parse.
 */

#include "common.h"
#include "json.h"

void json_init(struct json *j, FILE *out, bool oneline)
{
	j->out = out;
	j->oneline = oneline;
	j->depth = 0;
	j->first[0] = true;
}

void json_end(struct json *j)
{
	if (j->depth)
		die("json: document ended inside %d open values", j->depth);
	fputc('\n', j->out);
}

/*
 * RFC 8259: '"', '\\' and the control characters below 0x20 must be
 * escaped; everything else may stand for itself. Bytes from 0x80 up are
 * written as they are: kgoctl's strings are UTF-8 (or ASCII), and a
 * byte-wise \u escape would turn each byte of a multibyte character
 * into a character of its own.
 */
void json_escape(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', out);
	for (; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\b':
			fputs("\\b", out);
			break;
		case '\f':
			fputs("\\f", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

/* The comma, the line break and indentation, and the key of a value. */
static void json_member(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->out);
	if (j->depth) {
		if (j->oneline) {
			if (!j->first[j->depth])
				fputc(' ', j->out);
		} else {
			fprintf(j->out, "\n%*s", 2 * j->depth, "");
		}
	}
	j->first[j->depth] = false;
	if (key) {
		json_escape(j->out, key);
		fputs(": ", j->out);
	}
}

static void json_open(struct json *j, const char *key, char c)
{
	json_member(j, key);
	if (j->depth + 1 >= JSON_MAX_DEPTH)
		die("json: nested deeper than %d", JSON_MAX_DEPTH - 1);
	fputc(c, j->out);
	j->first[++j->depth] = true;
}

static void json_close(struct json *j, char c)
{
	bool empty;

	if (!j->depth)
		die("json: '%c' without its opening", c);
	empty = j->first[j->depth--];
	if (!empty && !j->oneline)
		fprintf(j->out, "\n%*s", 2 * j->depth, "");
	fputc(c, j->out);
}

void json_object_begin(struct json *j, const char *key)
{
	json_open(j, key, '{');
}

void json_object_end(struct json *j)
{
	json_close(j, '}');
}

void json_array_begin(struct json *j, const char *key)
{
	json_open(j, key, '[');
}

void json_array_end(struct json *j)
{
	json_close(j, ']');
}

void json_u64(struct json *j, const char *key, __u64 v)
{
	json_member(j, key);
	fprintf(j->out, "%llu", v);
}

void json_s64(struct json *j, const char *key, __s64 v)
{
	json_member(j, key);
	fprintf(j->out, "%lld", v);
}

void json_bool(struct json *j, const char *key, bool v)
{
	json_member(j, key);
	fputs(v ? "true" : "false", j->out);
}

void json_null(struct json *j, const char *key)
{
	json_member(j, key);
	fputs("null", j->out);
}

void json_string(struct json *j, const char *key, const char *s)
{
	json_member(j, key);
	json_escape(j->out, s);
}
