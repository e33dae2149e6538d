#!/usr/bin/env python3
"""Checks of deploy/ for fleet-kit.sh (python3 and python3-yaml only).

  manifest TOP                 check deploy/kubernetes/retop-daemonset.yaml
                               against retop's documented capabilities
                               (systemd/retop.service.in), its CLI and
                               deploy/prometheus/prometheus.yml; print its
                               facts as shell assignments
  argv TOP ADDR PATH           the container's args, one a line, with the
                               --serve address replaced by ADDR and the -x
                               path by PATH (nothing else changed)
  footprint PID                VmHWM and the memlock of the BPF maps PID
                               holds, in bytes: "HWM MAPS NMAPS"
  coverage TOP OUT             every alert of retop-alerts.yml is expected
                               firing and silent in retop-alerts.test.yml;
                               write to OUT a copy whose firing expectations
                               are all emptied (promtool must reject it)
  families URL                 the metric families of a live /metrics page
  promconf TOP TARGET NODE OUT deploy/prometheus/prometheus.yml with its
                               Kubernetes discovery replaced by TARGET and
                               the labels Kubernetes gives the DaemonSet's
                               pod on NODE; 1 s intervals; written to OUT
  rules TOP PROM PAGE          every metric the alert rules name is a family
                               of PAGE (a saved /metrics page) or `up`; PROM
                               loaded every rule and evaluated it without
                               error; print each alert's state
  dashboard TOP PROM PAGE      check the Grafana dashboard's shape, resolve
                               its variables through PROM as Grafana would,
                               and run every expression: each must return a
                               finite value and name only metrics on PAGE
"""
import json
import math
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

import yaml

DAEMONSET = "deploy/kubernetes/retop-daemonset.yaml"
PROMCONF = "deploy/prometheus/prometheus.yml"
RULES = "deploy/prometheus/retop-alerts.yml"
RULETESTS = "deploy/prometheus/retop-alerts.test.yml"
DASHBOARD = "deploy/grafana/retop-dashboard.json"
UNIT = "systemd/retop.service.in"

errors = []


def die(msg):
    print("fleet_kit: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        errors.append(msg)
    return cond


def finish():
    if errors:
        for e in errors:
            print("fleet_kit: " + e, file=sys.stderr)
        sys.exit(1)


def quantity(q):
    """A Kubernetes memory quantity (128Mi, 80M, 1Gi, 1000) in bytes."""
    m = re.fullmatch(r"([0-9.]+)(Ki|Mi|Gi|Ti|k|M|G|T)?", str(q))
    if not m:
        die("not a memory quantity: %r" % q)
    mult = {None: 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
            "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}[m.group(2)]
    return int(float(m.group(1)) * mult)


def retop_size(s):
    """--max-memory's SIZE: a number with K, M or G (powers of 1024)."""
    m = re.fullmatch(r"([0-9]+)([KMG]?)i?B?", s, re.I)
    if not m:
        die("not a --max-memory size: %r" % s)
    return int(m.group(1)) * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[m.group(2).upper()]


# ---- the DaemonSet -------------------------------------------------------

def load_daemonset(top):
    with open(os.path.join(top, DAEMONSET)) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    ds = [d for d in docs if d.get("kind") == "DaemonSet"]
    if len(ds) != 1:
        die("%s: %d DaemonSets, expected 1" % (DAEMONSET, len(ds)))
    return docs, ds[0]


def option_value(args, *names):
    """The value of the last of NAMES in ARGS (separate or NAME=VALUE)."""
    val, idx = None, None
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                val, idx = args[i + 1], i + 1
            elif n.startswith("--") and a.startswith(n + "="):
                val, idx = a[len(n) + 1:], i
    return val, idx


def documented_caps(top):
    """The capabilities retop's systemd unit gives it, without CAP_."""
    with open(os.path.join(top, UNIT)) as f:
        for line in f:
            if line.startswith("CapabilityBoundingSet="):
                return sorted(c[4:] if c.startswith("CAP_") else c
                              for c in line.split("=", 1)[1].split())
    die("%s: no CapabilityBoundingSet" % UNIT)


def cmd_manifest(top):
    docs, ds = load_daemonset(top)
    spec = ds.get("spec", {})
    tmpl = spec.get("template", {})
    pod = tmpl.get("spec", {})
    labels = tmpl.get("metadata", {}).get("labels", {})
    check(ds.get("apiVersion") == "apps/v1", "apiVersion is %r, not apps/v1" % ds.get("apiVersion"))
    check(spec.get("selector", {}).get("matchLabels", {}).items() <= labels.items(),
          "the selector does not match the pod template's labels")
    check(pod.get("hostPID") is True, "hostPID is not true: -x cannot see the node's processes")
    check(pod.get("hostNetwork") is not True, "hostNetwork: the pod is meant to keep its own network")
    ns = ds.get("metadata", {}).get("namespace")
    nsdoc = [d for d in docs if d.get("kind") == "Namespace" and d["metadata"]["name"] == ns]
    check(nsdoc and nsdoc[0]["metadata"].get("labels", {}).get(
        "pod-security.kubernetes.io/enforce") == "privileged",
        "namespace %r is not in the manifest with the privileged Pod Security level" % ns)
    ctrs = pod.get("containers", [])
    if not check(len(ctrs) == 1, "%d containers, expected 1" % len(ctrs)):
        finish()
    c = ctrs[0]
    cmd, args = c.get("command", []), [str(a) for a in c.get("args", [])]
    check(len(cmd) == 1 and os.path.basename(cmd[0]) == "retop",
          "command %r is not retop itself" % cmd)
    sc = c.get("securityContext", {})
    caps = sc.get("capabilities", {})
    want = documented_caps(top)
    check(sorted(caps.get("add", [])) == want,
          "capabilities.add %r, retop documents %r" % (caps.get("add"), want))
    check(caps.get("drop") == ["ALL"], "capabilities.drop is %r, not [ALL]" % caps.get("drop"))
    check(sc.get("privileged") is not True, "privileged: retop needs only its capabilities")
    check(sc.get("runAsUser") == 0,
          "runAsUser is %r: added capabilities are given to uid 0 only" % sc.get("runAsUser"))
    # The command line: --serve on every interface of the pod, -x, -t.
    addr, ai = option_value(args, "--serve")
    check(addr is not None, "args have no --serve ADDR")
    path, pi = option_value(args, "-x")
    check(path is not None and path.startswith("/"), "args have no -x /PATH")
    check(option_value(args, "-t", "--trace")[0] is not None, "args have no -t PATTERN")
    check(option_value(args, "-p")[0] is None, "-p PID does not fit a DaemonSet (a PID differs per node)")
    m = re.fullmatch(r"(.*):([0-9]+)", addr or "")
    check(m is not None and m.group(1) in ("0.0.0.0", "[::]"),
          "--serve %r: a pod is scraped on its IP, so retop must listen on every interface" % addr)
    port = int(m.group(2)) if m else None
    ports = {p.get("name"): p.get("containerPort") for p in c.get("ports", [])}
    check(ports.get("metrics") == port,
          "containerPort 'metrics' is %r, --serve listens on %r" % (ports.get("metrics"), port))
    probe = c.get("livenessProbe", {}).get("httpGet", {})
    check(probe.get("path") == "/healthz" and probe.get("port") in ("metrics", port),
          "livenessProbe is not GET /healthz on the metrics port")
    # The binary is mounted from the node at the path -x names.
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = [mt for mt in c.get("volumeMounts", []) if path and
              (path == mt["mountPath"] or path.startswith(mt["mountPath"].rstrip("/") + "/"))]
    if check(len(mounts) == 1, "-x %s is not on one volumeMount" % path):
        mt = mounts[0]
        hp = vols.get(mt["name"], {}).get("hostPath", {})
        check(mt.get("readOnly") is True, "the binary's mount is not readOnly")
        check(hp.get("path") and hp["path"] + path[len(mt["mountPath"]):] == path,
              "-x %s is not the node's file at the same path (hostPath %r)" % (path, hp.get("path")))
    for mt in c.get("volumeMounts", []):
        check(not mt["mountPath"].startswith(("/sys/kernel/debug", "/sys/fs/bpf")),
              "%s is mounted: retop needs neither debugfs nor bpffs" % mt["mountPath"])
    # Memory: requests and limits, and --max-memory under the limit.
    res = c.get("resources", {})
    req = res.get("requests", {}).get("memory")
    lim = res.get("limits", {}).get("memory")
    check(req is not None and lim is not None, "memory request and limit are not both set")
    req_b, lim_b = (quantity(req), quantity(lim)) if req and lim else (0, 0)
    check(req_b <= lim_b, "memory request %s is over the limit %s" % (req, lim))
    mm, _ = option_value(args, "--max-memory")
    mm_b = retop_size(mm) if mm else 0
    check(mm is None or mm_b <= lim_b,
          "--max-memory %s is over the memory limit %s: the limit would kill retop first" % (mm, lim))
    # The Prometheus job keeps exactly these pods, on this port name.
    with open(os.path.join(top, PROMCONF)) as f:
        conf = yaml.safe_load(f)
    jobs = [j for j in conf.get("scrape_configs", []) if j.get("job_name") == "retop"]
    if check(len(jobs) == 1, "%s has no job 'retop'" % PROMCONF):
        keeps = {tuple(r.get("source_labels", [])): r.get("regex")
                 for r in jobs[0].get("relabel_configs", []) if r.get("action") == "keep"}
        lab = keeps.get(("__meta_kubernetes_pod_label_app_kubernetes_io_name",))
        check(lab is not None and re.fullmatch(lab, labels.get("app.kubernetes.io/name", "")),
              "the scrape job does not keep the DaemonSet's pods (label app.kubernetes.io/name)")
        pn = keeps.get(("__meta_kubernetes_pod_container_port_name",))
        check(pn is not None and re.fullmatch(pn, "metrics"),
              "the scrape job does not keep the port named metrics")
        sd = jobs[0].get("kubernetes_sd_configs", [{}])[0]
        check(ns in sd.get("namespaces", {}).get("names", []),
              "the scrape job does not look in namespace %r" % ns)
    finish()
    print("caps=%s" % ",".join("+" + x.lower() for x in want))
    print("mem_request=%d" % req_b)
    print("mem_limit=%d" % lim_b)
    print("max_memory=%d" % mm_b)
    print("serve_addr=%s" % addr)
    print("target=%s" % path)


def cmd_argv(top, addr, path):
    _, ds = load_daemonset(top)
    args = [str(a) for a in ds["spec"]["template"]["spec"]["containers"][0]["args"]]
    _, ai = option_value(args, "--serve")
    _, pi = option_value(args, "-x")
    for i, a in enumerate(args):
        if i == ai:
            a = addr if args[i - 1] == "--serve" else "--serve=" + addr
        elif i == pi:
            a = path
        if "\n" in a:
            die("an argument holds a newline")
        print(a)


# ---- retop's footprint ---------------------------------------------------

def cmd_footprint(pid):
    hwm = None
    with open("/proc/%s/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) * 1024
    maps = {}
    d = "/proc/%s/fdinfo" % pid
    for fd in os.listdir(d):
        try:
            with open(os.path.join(d, fd)) as f:
                info = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
        except OSError:
            continue
        if "map_id" in info and "memlock" in info:
            maps[info["map_id"].strip()] = int(info["memlock"])
    print(hwm, sum(maps.values()), len(maps))


# ---- alert rules ---------------------------------------------------------

def load_rules(top):
    with open(os.path.join(top, RULES)) as f:
        return [r for g in yaml.safe_load(f)["groups"] for r in g["rules"]]


def cmd_coverage(top, out):
    alerts = [r["alert"] for r in load_rules(top) if "alert" in r]
    with open(os.path.join(top, RULETESTS)) as f:
        tests = yaml.safe_load(f)
    fires, silent = set(), set()
    for t in tests["tests"]:
        for a in t.get("alert_rule_test", []):
            (fires if a.get("exp_alerts") else silent).add(a["alertname"])
            if a.get("exp_alerts"):
                a["exp_alerts"] = []
    for a in alerts:
        check(a in fires, "%s: no test where it fires" % a)
        check(a in silent, "%s: no test where it stays silent" % a)
    check(not (fires | silent) - set(alerts),
          "tests of alerts that do not exist: %s" % sorted((fires | silent) - set(alerts)))
    finish()
    # The copy must still find the rule file next to it.
    tests["rule_files"] = [os.path.join(os.path.abspath(top), os.path.dirname(RULETESTS), p)
                           for p in tests["rule_files"]]
    with open(out, "w") as f:
        yaml.safe_dump(tests, f)
    print(" ".join(alerts))


KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool",
            "and", "or", "unless", "inf", "nan"}


def metric_names(expr):
    """The metric names a PromQL expression selects (for the expressions of
    deploy/: no @ modifiers, no subqueries, no __name__ matchers)."""
    s = re.sub(r'"(\\.|[^"\\])*"', '""', expr)          # strings
    s = re.sub(r"\{[^}]*\}", " ", s)                     # label matchers
    s = re.sub(r"\[[^\]]*\]", " ", s)                    # range durations
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    s = re.sub(r"\boffset\s+\S+", " ", s)
    names = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", s):
        tok = m.group(0)
        rest = s[m.end():].lstrip()
        if tok.lower() in KEYWORDS or rest.startswith("("):
            continue
        if re.fullmatch(r"[0-9.]+[a-z]*", tok):
            continue
        names.add(tok)
    return names


def page_families(text):
    fams = set()
    for line in text.splitlines():
        m = re.match(r"# TYPE (\S+) (\S+)", line)
        if m:
            fams.add(m.group(1))
            if m.group(2) == "histogram":
                fams.update(m.group(1) + s for s in ("_bucket", "_sum", "_count"))
    return fams


def api(prom, expr):
    url = "%s/api/v1/query?%s" % (prom, urllib.parse.urlencode({"query": expr}))
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            data = json.load(r)
    except urllib.error.HTTPError as e:
        return None, "HTTP %s: %s" % (e.code, e.read().decode(errors="replace")[:300])
    except OSError as e:
        return None, str(e)
    if data.get("status") != "success":
        return None, json.dumps(data)[:300]
    return data["data"]["result"], None


def cmd_families(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        text = r.read().decode()
    for f in sorted(page_families(text)):
        print(f)


def read_page(path):
    with open(path) as f:
        fams = page_families(f.read())
    if "retop_ready" not in fams:
        die("%s is not a /metrics page of retop" % path)
    return fams


def cmd_rules(top, prom, page):
    fams = read_page(page)
    rules = load_rules(top)
    for r in rules:
        name = r.get("alert") or r.get("record")
        for n in metric_names(r["expr"]):
            check(n in fams or n == "up", "%s: %s is not on retop's /metrics page" % (name, n))
    url = "%s/api/v1/rules" % prom
    with urllib.request.urlopen(url, timeout=10) as f:
        groups = json.load(f)["data"]["groups"]
    live = {r["name"]: r for g in groups for r in g["rules"]}
    states = []
    for r in rules:
        name = r.get("alert") or r.get("record")
        lr = live.get(name)
        if not check(lr is not None, "%s: not loaded by Prometheus" % name):
            continue
        check(lr.get("health") == "ok" and not lr.get("lastError"),
              "%s: health %r: %s" % (name, lr.get("health"), lr.get("lastError")))
        check(not lr.get("lastEvaluation", "").startswith("0001-"), "%s: never evaluated" % name)
        states.append("%s %s" % (name, lr.get("state", "-")))
    finish()
    print("\n".join(states))


def cmd_promconf(top, target, node, out):
    """deploy/prometheus/prometheus.yml as a test runs it: Kubernetes
    discovery replaced by TARGET with the metadata Kubernetes gives the
    DaemonSet's pod on node NODE (so the relabelling runs as in a cluster),
    rule files by absolute paths, 1 s intervals."""
    _, ds = load_daemonset(top)
    tmpl = ds["spec"]["template"]
    ctr = tmpl["spec"]["containers"][0]
    with open(os.path.join(top, PROMCONF)) as f:
        conf = yaml.safe_load(f)
    conf["global"] = {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"}
    conf["rule_files"] = [os.path.join(os.path.abspath(top), os.path.dirname(PROMCONF), p)
                          for p in conf.get("rule_files", [])]
    job = [j for j in conf["scrape_configs"] if j["job_name"] == "retop"][0]
    del job["kubernetes_sd_configs"]
    meta = {"__meta_kubernetes_namespace": ds["metadata"]["namespace"],
            "__meta_kubernetes_pod_node_name": node,
            "__meta_kubernetes_pod_container_name": ctr["name"],
            "__meta_kubernetes_pod_container_port_name": ctr["ports"][0]["name"]}
    for k, v in tmpl["metadata"]["labels"].items():
        meta["__meta_kubernetes_pod_label_" + re.sub(r"[^A-Za-z0-9_]", "_", k)] = v
    job["static_configs"] = [{"targets": [target], "labels": meta}]
    with open(out, "w") as f:
        yaml.safe_dump(conf, f)


# ---- the dashboard -------------------------------------------------------

REGEX_SPECIAL = re.compile(r"([\\^$*+?.()|{}\[\]])")


def grafana_value(var, values):
    """A variable's value as Grafana's Prometheus data source puts it into a
    query: multi-value variables as an escaped regex alternation."""
    if var.get("multi") or var.get("includeAll"):
        esc = [REGEX_SPECIAL.sub(r"\\\\\1", v) for v in values]
        return esc[0] if len(esc) == 1 else "(" + "|".join(esc) + ")"
    return values[0]


def substitute(expr, vals):
    # Grafana's built-in ranges: 4 scrape intervals of 1 s at least.
    expr = expr.replace("$__rate_interval", "10s").replace("$__interval", "2s")
    for name in sorted(vals, key=len, reverse=True):
        expr = expr.replace("${%s}" % name, vals[name]).replace("$" + name, vals[name])
    return expr


def label_values(prom, query, vals):
    m = re.fullmatch(r"label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\)", query.strip())
    if not m:
        die("variable query %r is not label_values(SELECTOR, LABEL)" % query)
    sel, label = substitute(m.group(1), vals), m.group(2)
    url = "%s/api/v1/series?%s" % (prom, urllib.parse.urlencode({"match[]": sel}))
    with urllib.request.urlopen(url, timeout=10) as r:
        data = json.load(r)["data"]
    return sorted({s[label] for s in data if label in s})


def cmd_dashboard(top, prom, page):
    fams = read_page(page)
    with open(os.path.join(top, DASHBOARD)) as f:
        d = json.load(f)
    check(d.get("schemaVersion", 0) >= 36, "schemaVersion %r is older than Grafana 9" % d.get("schemaVersion"))
    check(d.get("uid") and d.get("title"), "no uid or title")
    tvars = d.get("templating", {}).get("list", [])
    ds = [v for v in tvars if v.get("type") == "datasource"]
    check(len(ds) == 1 and ds[0].get("query") == "prometheus",
          "no Prometheus data source variable")
    dsref = "${%s}" % ds[0]["name"] if ds else None
    # Resolve the query variables in order, each from the live Prometheus.
    vals, resolved = {}, []
    for v in tvars:
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        values = label_values(prom, q, vals)
        if not check(values, "variable %s: %s has no values" % (v["name"], q)):
            finish()
        vals[v["name"]] = grafana_value(v, values)
        resolved.append("%s=%s" % (v["name"], "|".join(values)))
    ids, exprs = set(), []

    def walk(panels):
        for p in panels:
            check(p.get("id") not in ids, "panel id %r repeats" % p.get("id"))
            ids.add(p.get("id"))
            check("gridPos" in p, "panel %r has no gridPos" % p.get("title"))
            if p.get("type") == "row":
                walk(p.get("panels", []))
                continue
            check(p.get("datasource", {}).get("uid") == dsref,
                  "panel %r does not use the data source variable" % p.get("title"))
            check(p.get("targets"), "panel %r has no query" % p.get("title"))
            for t in p.get("targets", []):
                check(t.get("datasource", {}).get("uid") == dsref,
                      "panel %r, query %s: not on the data source variable" % (p.get("title"), t.get("refId")))
                exprs.append((p.get("title"), t.get("refId"), t.get("expr", "")))
    walk(d.get("panels", []))
    for title, ref, expr in exprs:
        where = "panel %r, query %s" % (title, ref)
        for n in metric_names(expr):
            check(n in fams or n == "up", "%s: %s is not on retop's /metrics page" % (where, n))
        q = substitute(expr, vals)
        check("$" not in q, "%s: a variable is left after substitution: %s" % (where, q))
        res, err = api(prom, q)
        if not check(err is None, "%s: %s: %s" % (where, q, err)):
            continue
        finite = [r for r in res if not math.isnan(float(r["value"][1]))]
        check(finite, "%s: no data (%d series, none finite): %s" % (where, len(res), q))
    finish()
    print("%d panels, %d queries, every one with data; variables %s"
          % (len(ids), len(exprs), "; ".join(resolved)))


CMDS = {"manifest": (cmd_manifest, 1), "argv": (cmd_argv, 3), "footprint": (cmd_footprint, 1),
        "coverage": (cmd_coverage, 2), "families": (cmd_families, 1), "rules": (cmd_rules, 3),
        "promconf": (cmd_promconf, 4),
        "dashboard": (cmd_dashboard, 3)}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CMDS or len(sys.argv) - 2 != CMDS[sys.argv[1]][1]:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    CMDS[sys.argv[1]][0](*sys.argv[2:])
