/*
 * wordcount: an Extism plugin in C, built with clang's wasm32 target
 * against Debian's wasi-libc as a reactor without a start function (no
 * main; -nostartfiles -Wl,--no-entry, each export named with
 * -Wl,--export). The Extism kernel imports are declared here, by hand.
 *
 *   count     raw text in; {"bytes":N,"lines":N,"words":N} out (words:
 *             runs of bytes that are not ASCII white space; lines: the
 *             newline bytes)
 *   adler32   raw bytes in; the Adler-32 checksum out, 4 bytes big-endian
 *   empty     fails with a plain-text error when the input has no words
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMPORT(name) __attribute__((import_module("extism:host/env"), import_name(name)))

IMPORT("input_length") extern uint64_t extism_input_length(void);
IMPORT("input_load_u8") extern uint8_t extism_input_load_u8(uint64_t offset);
IMPORT("alloc") extern uint64_t extism_alloc(uint64_t n);
IMPORT("store_u8") extern void extism_store_u8(uint64_t offset, uint8_t b);
IMPORT("output_set") extern void extism_output_set(uint64_t offset, uint64_t n);
IMPORT("error_set") extern void extism_error_set(uint64_t offset);

/* input returns the call's input in a buffer of its own (NULL when it is
 * empty or the buffer cannot be had) and its length in *n. */
static uint8_t *input(size_t *n) {
	*n = (size_t)extism_input_length();
	if (*n == 0)
		return NULL;
	uint8_t *b = malloc(*n);
	if (b == NULL)
		return NULL;
	for (size_t i = 0; i < *n; i++)
		b[i] = extism_input_load_u8(i);
	return b;
}

/* block copies n bytes into a new kernel block and returns its offset. */
static uint64_t block(const void *p, size_t n) {
	uint64_t off = extism_alloc(n);
	for (size_t i = 0; i < n; i++)
		extism_store_u8(off + i, ((const uint8_t *)p)[i]);
	return off;
}

static void output(const void *p, size_t n) { extism_output_set(block(p, n), n); }

static int fail(const char *msg) {
	extism_error_set(block(msg, strlen(msg)));
	return 1;
}

static int space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

static size_t words(const uint8_t *b, size_t n, size_t *lines) {
	size_t w = 0;
	int in = 0;
	*lines = 0;
	for (size_t i = 0; i < n; i++) {
		if (b[i] == '\n')
			(*lines)++;
		if (space(b[i]))
			in = 0;
		else if (!in) {
			in = 1;
			w++;
		}
	}
	return w;
}

int count(void) {
	size_t n, lines;
	uint8_t *b = input(&n);
	if (b == NULL && n > 0)
		return fail("wordcount: no memory for the input");
	size_t w = words(b, n, &lines);
	free(b);
	char out[96];
	int len = snprintf(out, sizeof out, "{\"bytes\":%zu,\"lines\":%zu,\"words\":%zu}", n, lines, w);
	output(out, (size_t)len);
	return 0;
}

int adler32(void) {
	size_t n;
	uint8_t *b = input(&n);
	if (b == NULL && n > 0)
		return fail("wordcount: no memory for the input");
	uint32_t a = 1, s = 0;
	for (size_t i = 0; i < n; i++) {
		a = (a + b[i]) % 65521;
		s = (s + a) % 65521;
	}
	free(b);
	uint32_t sum = s << 16 | a;
	uint8_t out[4] = {sum >> 24, sum >> 16, sum >> 8, sum};
	output(out, sizeof out);
	return 0;
}

int empty(void) {
	size_t n, lines;
	uint8_t *b = input(&n);
	size_t w = words(b, n, &lines);
	free(b);
	if (w == 0)
		return fail("wordcount: the text has no words");
	output("{\"empty\":false}", 15);
	return 0;
}
