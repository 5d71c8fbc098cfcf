#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tools/numaplace/check-engines.py NUMAPLACE: hold every place that names
the migration engines to the one list, the "engine" definition of
Documentation/netlink/specs/numaplace.yaml (in its order: bit n is the
n-th entry):

- uapi/linux/numaplace.h: NUMAPLACE_ENGINE_<NAME> is (1U << n), with a
  NUMAPLACE_MIGRATE_ENGINE_<NAME> flag and a NUMAPLACE_FEAT_MIGRATE_<NAME>
  feature each, NUMAPLACE_MIGRATE_ENGINES the OR of the flags, and no
  other engine in any of them;
- the spec's config-engine enum: "auto", then engines of the list;
- the CLI: its engine bit names (tools/numaplace/util.c), the --engine
  choices of `NUMAPLACE migrate --help` and the engine= values of
  `NUMAPLACE config --help`;
- numaplace(1): the --engine entry and the engine= key.

Prints each mismatch and exits 1 on any (make engine-check, in make check).
"""
import re
import subprocess
import sys

import yaml

TOP = sys.path[0] + "/../.."
SPEC = TOP + "/Documentation/netlink/specs/numaplace.yaml"
UAPI = TOP + "/uapi/linux/numaplace.h"
UTIL = TOP + "/tools/numaplace/util.c"
MAN = TOP + "/Documentation/man/numaplace.1"

bad = []


def check(what, got, want):
    if got != want:
        bad.append(f"{what}: {got}, want {want}")


def words(phrase):
    """"a, b, c or d" and "a|b|c" -> [a, b, c, d]."""
    return [w for w in re.split(r",\s*|\s+or\s+|\s*\|\s*", phrase.strip()) if w]


def defs(text, prefix):
    """The names and values of #define PREFIX<NAME> VALUE, in order."""
    return [(m.group(1), m.group(2).strip()) for m in
            re.finditer(r"^#define\s+" + prefix + r"(\w+)\s+(.*?)\s*(?:/\*.*)?$",
                        text, re.M)]


def main():
    cli = sys.argv[1]
    spec = yaml.safe_load(open(SPEC))
    d = {x["name"]: x for x in spec["definitions"]}
    engines = [e["name"] for e in d["engine"]["entries"]]
    upper = [e.upper() for e in engines]

    uapi = open(UAPI).read()
    check("NUMAPLACE_ENGINE_*", defs(uapi, "NUMAPLACE_ENGINE_"),
          [(n, f"(1U << {i})") for i, n in enumerate(upper)])
    flags = [n for n, _ in defs(uapi, "NUMAPLACE_MIGRATE_ENGINE_")]
    check("NUMAPLACE_MIGRATE_ENGINE_*", sorted(flags), sorted(upper))
    m = re.search(r"#define\s+NUMAPLACE_MIGRATE_ENGINES\s+\(((?:[^()]|\n)*?)\)\n",
                  uapi)
    ored = re.findall(r"NUMAPLACE_MIGRATE_ENGINE_(\w+)", m.group(1)) if m else []
    check("NUMAPLACE_MIGRATE_ENGINES", sorted(ored), sorted(upper))
    feats = [n for n, _ in defs(uapi, "NUMAPLACE_FEAT_MIGRATE_")]
    check("NUMAPLACE_FEAT_MIGRATE_* engines",
          [n for n in upper if n not in feats], [])

    config = [e["name"] for e in d["config-engine"]["entries"]]
    check("config-engine's first entry", config[:1], ["auto"])
    check("config-engine entries not in the engine list",
          [n for n in config[1:] if n not in engines], [])

    util = open(UTIL).read()
    check("util.c np_engine_bit_names",
          re.findall(r'\{\s*NUMAPLACE_ENGINE_(\w+),\s*"(\w+)"\s*\}', util),
          [(u, n) for u, n in zip(upper, engines)])

    def helptext(cmd):
        return subprocess.run([cli, cmd, "--help"], check=True,
                              capture_output=True, text=True).stdout

    m = re.search(r"--engine ENGINE\s+only this engine: (.*)", helptext("migrate"))
    check("numaplace migrate --help: --engine", words(m.group(1)) if m else None,
          engines)
    m = re.search(r"^\s+engine\s+(\S+)$", helptext("config"), re.M)
    check("numaplace config --help: engine", words(m.group(1)) if m else None,
          config)

    man = open(MAN).read()
    m = re.search(r'^\.BR \\-\\-engine " \\fIENGINE\\fR"\n(.*?)^\.TP', man,
                  re.M | re.S)
    check("numaplace(1) --engine", re.findall(r"^\.B (\w+)$", m.group(1), re.M)
          if m else None, engines)
    m = re.search(r"^\.BR engine = (.*)$", man, re.M)
    check("numaplace(1) engine=", words(m.group(1)) if m else None, config)

    for b in bad:
        print("engine-check: " + b, file=sys.stderr)
    if bad:
        print(f"engine-check: the engine list is {engines} ({SPEC[len(TOP) + 1:]}, "
              "definition 'engine')", file=sys.stderr)
        return 1
    print(f"engine-check: {', '.join(engines)}: the uapi, the CLI and numaplace(1) agree with the spec")
    return 0


sys.exit(main())
