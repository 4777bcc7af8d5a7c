/* test-png.c - unit tests for src/review/png.h: what a picture says drew it
 * (the "Software" chunk verify reads before comparing), and that the
 * drawing is apiparity's own, whatever the machine's font configuration. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "review/png.h"
#include "testutil.h"

static const char svg[] =
	"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"120\" height=\"24\">"
	"<rect width=\"120\" height=\"24\" fill=\"#ffffff\"/>"
	"<text x=\"4\" y=\"16\" font-family=\"monospace\" font-size=\"13\">clone() 一致</text></svg>";

/* PNG's CRC-32 (ISO 3309) of p[0..n), bit by bit: a test needs a few. */
static uint32_t crc32_of(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
	}
	return c ^ 0xffffffffu;
}

/* A PNG chunk of type type holding data[0..len), with its CRC, into out. */
static void chunk(struct ap_buf *out, const char *type, const void *data, size_t len)
{
	unsigned char be[4] = { (unsigned char)(len >> 24), (unsigned char)(len >> 16),
				(unsigned char)(len >> 8), (unsigned char)len };
	ap_buf_add(out, be, 4);
	size_t at = out->len;
	ap_buf_add(out, type, 4);
	ap_buf_add(out, data, len);
	uint32_t crc = crc32_of((const unsigned char *)out->data + at, len + 4);
	unsigned char c[4] = { (unsigned char)(crc >> 24), (unsigned char)(crc >> 16),
			       (unsigned char)(crc >> 8), (unsigned char)crc };
	ap_buf_add(out, c, 4);
}

/* png with its first "Software" tEXt chunk's text replaced by text (the
 * chunks are walked; the others are kept as they are). */
static void with_software(const struct ap_buf *png, const char *text, size_t tlen,
			  struct ap_buf *out)
{
	const unsigned char *p = (const unsigned char *)png->data;
	ap_buf_add(out, p, 8);
	for (size_t at = 8; at + 12 <= png->len;) {
		size_t len = (size_t)p[at] << 24 | (size_t)p[at + 1] << 16 | (size_t)p[at + 2] << 8 |
			     p[at + 3];
		if (!memcmp(p + at + 4, "tEXt", 4) && !memcmp(p + at + 8, "Software", 9)) {
			struct ap_buf d = { 0 };
			ap_buf_add(&d, "Software", 9);
			ap_buf_add(&d, text, tlen);
			chunk(out, "tEXt", d.data, d.len);
			ap_buf_free(&d);
		} else
			ap_buf_add(out, p + at, len + 12);
		at += len + 12;
	}
}

static void drawn(struct ap_buf *png)
{
	struct ap_buf err = { 0 };
	int r = ap_png_from_svg(svg, strlen(svg), "d", png, &err);
	if (r)
		fail_msg("cannot draw: %s", ap_buf_str(&err));
	ap_buf_free(&err);
}

/* A picture names what drew it: the drawing of this machine, the fonts by
 * name and version. */
static void a_picture_names_its_drawing(void **state)
{
	(void)state;
	AP_PNG_SKIP();
	struct ap_buf png = { 0 }, sw = { 0 }, err = { 0 };
	drawn(&png);
	assert_int_equal(ap_png_software(png.data, png.len, &sw), 1);
	const char *ours = ap_png_drawing(&err);
	assert_non_null(ours);
	assert_string_equal(ap_buf_str(&sw), ours);
	assert_non_null(strstr(ours, "librsvg "));
	assert_non_null(strstr(ours, ", DejaVu Sans Mono 2."));
	ap_buf_free(&png);
	ap_buf_free(&sw);
	ap_buf_free(&err);
}

/* The font configuration of the machine (FONTCONFIG_FILE) is not the
 * drawing's: the same SVG draws the same bytes in a process whose
 * configuration makes monospace a serif face without antialiasing as in
 * one with the machine's. Each is a child of its own (fontconfig sets up
 * once a process), the bytes sent back on a pipe. */
static void drawn_in_a_child(const char *fonts_conf, struct ap_buf *png)
{
	int fd[2];
	assert_int_equal(pipe(fd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(fd[0]);
		if (fonts_conf)
			setenv("FONTCONFIG_FILE", fonts_conf, 1);
		struct ap_buf b = { 0 }, err = { 0 };
		int r = ap_png_from_svg(svg, strlen(svg), "d", &b, &err);
		_exit(r || write(fd[1], b.data, b.len) != (ssize_t)b.len);
	}
	close(fd[1]);
	char chunk[4096];
	ssize_t n;
	while ((n = read(fd[0], chunk, sizeof(chunk))) > 0)
		ap_buf_add(png, chunk, (size_t)n);
	close(fd[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && !WEXITSTATUS(st));
}

static void another_font_configuration_draws_the_same_bytes(void **state)
{
	(void)state;
	AP_PNG_SKIP();
	/* Absolute: fontconfig takes a relative name from its own directory. */
	char dir[4096], conf[4200];
	assert_int_equal(t_tempdir(dir, sizeof(dir), "test-png"), 0);
	snprintf(conf, sizeof(conf), "%s/fonts.conf", dir);
	FILE *f = fopen(conf, "w");
	assert_non_null(f);
	fputs("<?xml version=\"1.0\"?><fontconfig><dir>/usr/share/fonts</dir>"
	      "<alias binding=\"strong\"><family>monospace</family><prefer><family>DejaVu Serif"
	      "</family></prefer></alias><match target=\"font\"><edit name=\"antialias\" "
	      "mode=\"assign\"><bool>false</bool></edit><edit name=\"hinting\" mode=\"assign\">"
	      "<bool>false</bool></edit></match></fontconfig>", f);
	fclose(f);
	struct ap_buf plain = { 0 }, other = { 0 };
	drawn_in_a_child(NULL, &plain);
	drawn_in_a_child(conf, &other);
	t_rmtree(dir);
	assert_true(plain.len > 8);
	assert_int_equal(plain.len, other.len);
	assert_memory_equal(plain.data, other.data, plain.len);
	ap_buf_free(&plain);
	ap_buf_free(&other);
}

/* What a forged chunk says is data: bounded, printable; a file that is not
 * a PNG, or is cut short, is no drawing; a PNG without the chunk has none. */
static void a_forged_software_chunk_is_data(void **state)
{
	(void)state;
	AP_PNG_SKIP();
	struct ap_buf png = { 0 }, forged = { 0 }, sw = { 0 };
	drawn(&png);
	char text[2000];
	memset(text, 'x', sizeof(text));
	memcpy(text, "evil\x1b[31m\n", 10);
	with_software(&png, text, sizeof(text), &forged);
	assert_int_equal(ap_png_software(forged.data, forged.len, &sw), 1);
	assert_int_equal(sw.len, AP_PNG_SOFTWARE_MAX);
	assert_memory_equal(sw.data, "evil?[31m?xx", 12);
	ap_buf_reset(&sw);
	assert_int_equal(ap_png_software("GIF89a", 6, &sw), -EINVAL);
	assert_int_equal(ap_png_software(png.data, 30, &sw), -EINVAL);
	ap_buf_reset(&forged);
	/* The chunk's type changed to an unknown ancillary one: no Software. */
	with_software(&png, "x", 1, &forged);
	char *t = memmem(forged.data, forged.len, "tEXtSoftware", 12);
	assert_non_null(t);
	memcpy(t, "zzzz", 4);
	assert_int_equal(ap_png_software(forged.data, forged.len, &sw), 0);
	assert_int_equal(sw.len, 0);
	ap_buf_free(&png);
	ap_buf_free(&forged);
	ap_buf_free(&sw);
}

int main(void)
{
	/* It waits for children: one that never ends (a mutant's) is this
	 * binary's failure (SIGALRM), not a run that never ends. */
	alarm(120);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(another_font_configuration_draws_the_same_bytes),
		cmocka_unit_test(a_picture_names_its_drawing),
		cmocka_unit_test(a_forged_software_chunk_is_data),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
