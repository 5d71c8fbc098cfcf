#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tools/numaplace/check-engines.py NUMAPLACE: hold every place that names
the migration engines to the one list, the "engine" definition of
Documentation/netlink/specs/numaplace.yaml (in its order: bit n is the
n-th entry):

- uapi/linux/numaplace.h: NUMAPLACE_ENGINE_<NAME> is (1U << n); each
  engine has a NUMAPLACE_MIGRATE_ENGINE_<NAME> flag (bits of their own)
  and a NUMAPLACE_FEAT_MIGRATE_<NAME> feature; NUMAPLACE_MIGRATE_ENGINES
  is the OR of the flags; no flag names another engine, and a
  NUMAPLACE_FEAT_MIGRATE_* names an engine or an engine's own feature
  (<NAME>_..., as PT_THP);
- the spec's config-engine enum: "auto", then engines of the list;
- the CLI: its engine bit names (tools/numaplace/util.c), its --engine
  table (tools/numaplace/migrate.c: each engine's flag, feature and bit
  name), its config names (tools/numaplace/config.c), the --engine
  choices of `NUMAPLACE migrate --help` and the engine= values of
  `NUMAPLACE config --help`;
- libnumaplace's engine names (numaplace_engine_name(), which the
  benchmarks use);
- the module: each engine's np_engine_<name>_ops (NP_ENGINE(), its
  config value where CONFIG_SET names it) and module/engine.c's table;
- numaplace(1): the --engine entry and the engine= key.

Prints each mismatch and exits 1 on any (make engine-check, in make check).
"""
import glob
import re
import subprocess
import sys

import yaml

TOP = sys.path[0] + "/../.."
SPEC = TOP + "/Documentation/netlink/specs/numaplace.yaml"
UAPI = TOP + "/uapi/linux/numaplace.h"
UTIL = TOP + "/tools/numaplace/util.c"
CLI_MIGRATE = TOP + "/tools/numaplace/migrate.c"
CLI_CONFIG = TOP + "/tools/numaplace/config.c"
LIB = TOP + "/tools/lib/migrate.c"
BIT_NAME_RE = r'\{\s*NUMAPLACE_ENGINE_(\w+),\s*"(\w+)"\s*\}'
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
    flagdefs = defs(uapi, "NUMAPLACE_MIGRATE_ENGINE_")
    flags = [n for n, _ in flagdefs]
    check("NUMAPLACE_MIGRATE_ENGINE_*", sorted(flags), sorted(upper))
    bits = [v for _, v in flagdefs]
    check("NUMAPLACE_MIGRATE_ENGINE_* not (1U << n) each, or a bit twice",
          [v for v in bits if not re.fullmatch(r"\(1U << \d+\)", v)
           or bits.count(v) > 1], [])
    m = re.search(r"#define\s+NUMAPLACE_MIGRATE_ENGINES\s+\(((?:[^()]|\n)*?)\)\n",
                  uapi)
    ored = re.findall(r"NUMAPLACE_MIGRATE_ENGINE_(\w+)", m.group(1)) if m else []
    check("NUMAPLACE_MIGRATE_ENGINES", sorted(ored), sorted(upper))
    feats = [n for n, _ in defs(uapi, "NUMAPLACE_FEAT_MIGRATE_")]
    check("engines without NUMAPLACE_FEAT_MIGRATE_<NAME>",
          [n for n in upper if n not in feats], [])
    check("NUMAPLACE_FEAT_MIGRATE_* of no engine",
          [f for f in feats if f not in upper and
           not any(f.startswith(n + "_") for n in upper)], [])

    config = [e["name"] for e in d["config-engine"]["entries"]]
    check("config-engine's first entry", config[:1], ["auto"])
    check("config-engine entries not in the engine list",
          [n for n in config[1:] if n not in engines], [])

    # The module: each engine's file fills np_engine_<name>_ops with
    # NP_ENGINE(<name>, <NAME>) and, where CONFIG_SET names it, its
    # config value; module/engine.c's table lists every one.
    ops = {}
    for path in sorted(glob.glob(TOP + "/module/engine_*.c")):
        src = open(path).read()
        for m in re.finditer(r"const struct np_engine_ops np_engine_(\w+)_ops = \{"
                             r"(.*?)\n\};", src, re.S):
            ops[m.group(1)] = m.group(2)
    check("module/engine_*.c np_engine_<name>_ops", sorted(ops),
          sorted(engines))
    check("module/engine_*.c NP_ENGINE(name, NAME)",
          sorted(re.findall(r"NP_ENGINE\((\w+), (\w+)\)", "".join(ops.values()))),
          sorted(zip(engines, upper)))
    check("module/engine_*.c .config of engines CONFIG_SET names",
          sorted(n for n, body in ops.items() if re.search(
              r"\.config = NUMAPLACE_CONFIG_ENGINE_" + n.upper() + r",", body)),
          sorted(config[1:]))
    check("module/engine.c np_engines[]",
          sorted(re.findall(r"&np_engine_(\w+)_ops,",
                            open(TOP + "/module/engine.c").read())),
          sorted(engines))

    pairs = [(u, n) for u, n in zip(upper, engines)]
    check("tools/numaplace/util.c np_engine_bit_names",
          re.findall(BIT_NAME_RE, open(UTIL).read()), pairs)
    check("tools/lib/migrate.c np_engine_names (numaplace_engine_name())",
          re.findall(BIT_NAME_RE, open(LIB).read()), pairs)
    check("tools/numaplace/migrate.c np_engines",
          re.findall(r"\{\s*NUMAPLACE_MIGRATE_ENGINE_(\w+),\s*"
                     r"NUMAPLACE_FEAT_MIGRATE_(\w+),\s*"
                     r"&np_engine_bit_names\[(\d+)\]\s*\}",
                     open(CLI_MIGRATE).read()),
          [(u, u, str(i)) for i, u in enumerate(upper)])
    check("tools/numaplace/config.c np_engine_names",
          re.findall(r'\[NUMAPLACE_CONFIG_ENGINE_(\w+)\]\s*=\s*"(\w+)"',
                     open(CLI_CONFIG).read()),
          [(c.upper(), c) for c in config])

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
    print(f"engine-check: {', '.join(engines)}: the uapi, the module, the CLI and numaplace(1) agree with the spec")
    return 0


sys.exit(main())
