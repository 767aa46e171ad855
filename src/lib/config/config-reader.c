/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The line reader that feeds inih (ini_parse_stream()).
 *
 * What the format accepts, on Debian 12's libinih 55 (measured: the library
 * is built with INI_USE_STACK, INI_MAX_LINE 200, MAX_SECTION 50, multi-line
 * values, a UTF-8 BOM and ';' inline comments on; the limits are compiled in,
 * and pkg-config passes no -D):
 *
 *   - One statement per line: "[section]", "key = value" (inih also takes
 *     "key: value"), a comment or a blank line. Leading whitespace is
 *     ignored. Lines end in "\n" or "\r\n".
 *   - A line holds at most 197 bytes, leading whitespace included and the
 *     line ending not (inih's 200-byte buffer must hold "\r\n\0"). inih
 *     would split a longer line in two without a word; it is an error here.
 *   - A section name holds at most 49 bytes (inih cuts longer ones without
 *     a word; an error here). Section names and keys are exact and
 *     case-sensitive. After ']' only a ';' comment may follow (inih ignores
 *     anything there; an error here).
 *   - Comments: a line whose first non-blank byte is ';' or '#', and an
 *     inline comment from a ';' that follows whitespace: "a ; b" is "a",
 *     "a;b" stays "a;b". '#' starts no inline comment: "a # b" is "a # b".
 *   - Values are trimmed. An empty value is allowed where it means
 *     something: an empty subtree-control or controllers manages nothing.
 *   - No multi-line values. inih appends an indented line to the previous
 *     key's value (INI_ALLOW_MULTILINE); that turns an indented "key = value"
 *     into part of the key above it. We strip leading whitespace before inih
 *     sees a line, so indentation is cosmetic and an indented line without
 *     '=' is an error.
 *   - One UTF-8 byte order mark at the start of a file is skipped, as inih
 *     does. A NUL byte is an error (inih would end the line there).
 *
 * Values (config-validate.c): paths are absolute and normalized; booleans
 * are yes/no, true/false, on/off, 1/0 in any case; subtree-control and
 * controllers are tokens separated by blanks, each a prefix ('+', '-', '#';
 * controllers takes no '-') and a cgroup2 controller name, each controller
 * at most once; [delegate] controllers are names separated by blanks or
 * commas; user is an existing user name or a numeric uid.
 *
 * Sections: [daemon] at most once per file, its keys merged over the files
 * (a later file wins); [cgroup] and [delegate] once per cgroup path.
 *
 * inih gets its lines from our reader (ini_parse_stream()), which numbers
 * them, keeps the raw text, tracks the current section and reports every
 * syntax error itself, then hands inih a blank line instead. inih splits
 * "key = value" and strips comments; its return value (the first bad line
 * only) is a fallback that the reader leaves nothing for.
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "cgbypass/macro.h"
#include "config-parser.h"

/* inih's lskip() and isspace() test, so that we classify lines exactly as it does */
char *skip_space(char *s) {
        while (*s && isspace((unsigned char) *s))
                s++;
        return s;
}

/*
 * inih's find_chars_or_comment(): the first of @chars, or the start of an
 * inline comment (';' after whitespace), or the end of the string. strcspn()
 * jumps to the next candidate (vectorized; a loop over the bytes cost ~30
 * instructions each); whether the byte before a ';' is a space is asked only
 * there.
 */
char *find_chars_or_comment(char *s, const char *chars) {
        char set[8];
        size_t n = chars ? strlen(chars) : 0;

        assert(n + 2 <= sizeof(set));
        memcpy(set, chars ? chars : "", n);
        set[n] = ';';
        set[n + 1] = '\0';
        for (char *p = s;; p++) {
                p += strcspn(p, set);
                /* a ';' that is also one of @chars ends the search like any of them */
                if (*p != ';' || (chars && strchr(chars, ';')) || (p > s && isspace((unsigned char) p[-1])))
                        return p;
        }
}

/* Bytes in p->in: 1; 0 at the end of the file; -errno for a read error. */
static int parser_fill(Parser *p) {
        size_t n;

        if (p->in_pos < p->in_len)
                return 1;
        n = fread(p->in, 1, sizeof(p->in), p->f);
        if (n == 0)
                return ferror(p->f) ? (errno > 0 ? -errno : -EIO) : 0;
        p->in_pos = 0;
        p->in_len = n;
        return 1;
}

/*
 * Reads one raw line of any length, keeps the first RAW_LINE_MAX bytes.
 * Return: 1 and the line's length without its ending in *ret_len; 0 at the
 * end of the file; -errno for a read error.
 */
static int parser_read_line(Parser *p, size_t *ret_len, bool *ret_nul) {
        size_t kept = 0, total = 0;
        bool nul = false, eol = false;
        int last = EOF, r;

        /* a run of bytes up to the newline at a time (memchr()), not a getc() and four tests a byte */
        for (;;) {
                r = parser_fill(p);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                const char *s = p->in + p->in_pos;
                size_t avail = p->in_len - p->in_pos;
                const char *nl = memchr(s, '\n', avail);
                size_t n = nl ? (size_t) (nl - s) : avail;

                if (n > 0) {
                        if (memchr(s, '\0', n))
                                nul = true;
                        if (kept < RAW_LINE_MAX) {
                                size_t k = n < RAW_LINE_MAX - kept ? n : RAW_LINE_MAX - kept;
                                memcpy(p->raw + kept, s, k);
                                kept += k;
                        }
                        total += n;
                        last = (unsigned char) s[n - 1];
                }
                p->in_pos += n + (nl ? 1 : 0);
                if (nl) {
                        eol = true;
                        break;
                }
        }
        if (!eol && total == 0)
                return 0;

        if (last == '\r') {             /* CRLF */
                total--;
                if (kept > total)
                        kept = total;
        }
        p->raw[kept] = '\0';
        *ret_len = total;
        *ret_nul = nul;
        return 1;
}

/* inih's ini_reader: hands inih one line at a time, blank where we found a problem. */
char *parser_reader(char *str, int num, void *stream) {
        Parser *p = stream;
        size_t len;
        bool nul;
        int r;

        if (p->eof)
                return NULL;
        r = parser_read_line(p, &len, &nul);
        if (r <= 0) {
                if (r < 0) {
                        p->line++;
                        parser_reject(p, "cannot read: %s", strerror(-r));
                }
                p->eof = true;
                return NULL;
        }
        p->line++;

        char *s = p->raw;
        if (p->line == 1 && startswith(s, "\xef\xbb\xbf")) {
                s += 3;
                len -= 3;
        }

        /* what inih's buffer of num bytes can hold with "\r\n\0" */
        size_t max = num > 3 ? (size_t) num - 3 : 0;
        const char *feed = "";

        if (nul)
                parser_reject(p, "line contains a NUL byte");
        else if (len > max)
                parser_reject(p, "line is longer than %zu bytes, which inih cannot hold; shorten it",
                              max);
        else {
                char *start = skip_space(s);

                if (*start == '\0' || *start == ';' || *start == '#')
                        ;
                else if (*start == '[')
                        parser_header(p, start);
                else {
                        char *end = find_chars_or_comment(start, "=:");
                        if (*end == '=' || *end == ':')
                                feed = start;
                        else if (start > s)
                                parser_reject(p, "indented line without '=': values cannot continue "
                                             "on the next line; put the whole value on one line");
                        else
                                parser_reject(p, "expected 'key = value', '[section]' or a comment");
                }
        }

        /* fits: strlen(feed) <= max; a copy, not snprintf(): this runs for every line */
        size_t n = strlen(feed);
        memcpy(str, feed, n);
        str[n] = '\n';
        str[n + 1] = '\0';
        return str;
}
