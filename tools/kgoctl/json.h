/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small JSON writer for kgoctl's --json: values in the order they are
 * written, the commas and the indentation kept for the caller, strings
 * escaped. Keys are plain ASCII names the caller chooses; every string
 * value goes through json_escape().
 */
#ifndef _KGOCTL_JSON_H
#define _KGOCTL_JSON_H

#include <stdbool.h>
#include <stdio.h>

#include <linux/types.h>

#define JSON_MAX_DEPTH	8

struct json {
	FILE *out;
	bool oneline;		/* JSON Lines: one document a line */
	int depth;
	bool first[JSON_MAX_DEPTH];	/* nothing written yet at that depth */
};

/* @oneline: the whole document on one line (schedtrace's JSON Lines). */
void json_init(struct json *j, FILE *out, bool oneline);
/* Ends the document with a newline. */
void json_end(struct json *j);

/* @key is NULL for the top level and for the members of an array. */
void json_object_begin(struct json *j, const char *key);
void json_object_end(struct json *j);
void json_array_begin(struct json *j, const char *key);
void json_array_end(struct json *j);

void json_u64(struct json *j, const char *key, __u64 v);
void json_s64(struct json *j, const char *key, __s64 v);
void json_bool(struct json *j, const char *key, bool v);
void json_null(struct json *j, const char *key);
void json_string(struct json *j, const char *key, const char *s);

/* @s as a JSON string, quotes included. */
void json_escape(FILE *out, const char *s);

#endif /* _KGOCTL_JSON_H */
