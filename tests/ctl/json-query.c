/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * json-query [KEY|INDEX...]: parse standard input as one JSON value (strictly,
 * nothing but whitespace after it) and print the value at the path given,
 * or the whole value: strings as they are, everything else as compact JSON.
 * Exit 1 when the input is not JSON or the path does not exist. For the tests
 * of cgbypassctl --json.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char *argv[]) {
        json_tokener *tok = json_tokener_new();
        json_object *root, *v;
        char *input = NULL;
        size_t size = 0, len;
        FILE *f = open_memstream(&input, &size);
        char buf[4096];

        if (!tok || !f)
                return 1;
        while ((len = fread(buf, 1, sizeof(buf), stdin)) > 0)
                fwrite(buf, 1, len, f);
        if (fclose(f) != 0)
                return 1;

        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        root = json_tokener_parse_ex(tok, input, (int) size);
        if (json_tokener_get_error(tok) != json_tokener_success) {
                fprintf(stderr, "json-query: not JSON: %s\n",
                        json_tokener_error_desc(json_tokener_get_error(tok)));
                return 1;
        }
        if (input[json_tokener_get_parse_end(tok) + strspn(input + json_tokener_get_parse_end(tok), " \t\r\n")]) {
                fprintf(stderr, "json-query: trailing data after the JSON value\n");
                return 1;
        }

        v = root;
        for (int i = 1; i < argc; i++) {
                if (json_object_is_type(v, json_type_array)) {
                        char *end;
                        long idx = strtol(argv[i], &end, 10);

                        if (*end || idx < 0 || (size_t) idx >= json_object_array_length(v)) {
                                fprintf(stderr, "json-query: no element '%s'\n", argv[i]);
                                return 1;
                        }
                        v = json_object_array_get_idx(v, (size_t) idx);
                } else if (!json_object_is_type(v, json_type_object) ||
                           !json_object_object_get_ex(v, argv[i], &v)) {
                        fprintf(stderr, "json-query: no member '%s'\n", argv[i]);
                        return 1;
                }
        }
        if (json_object_is_type(v, json_type_string))
                printf("%s\n", json_object_get_string(v));
        else
                printf("%s\n", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(root);
        json_tokener_free(tok);
        free(input);
        return 0;
}
