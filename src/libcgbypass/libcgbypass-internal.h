/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The project builds with -fvisibility=hidden; the ABI is what carries this (and libcgbypass.sym). */
#define _public_ __attribute__((__visibility__("default")))
