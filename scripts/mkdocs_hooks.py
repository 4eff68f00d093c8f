"""MkDocs hooks of the documentation site (mkdocs.yml `hooks:`), run by `mkdocs build`.

Generated at build time, so the pages cannot drift from what they describe:
- `<!-- schema-table: manifest|sweep|summary -->` in a page: a table of every key of
  docs/schema/KIND.schema.json (pointer, type, description);
- `<!-- stride-help -->`: the output of `stride help` and of `stride COMMAND --help` for every command;
- `<!-- plugin-reference -->`: every plugin's parameters and ports, from `stride plugins --json`
  and `stride plugins describe NAME --json`.
The `stride` run is $STRIDE_EXE, else build/bin/stride (build it first: ./stride or scripts/setup).
After the build, every link to an anchor (`page#id`, `#id`) must name an id of the page it
points to; a broken one fails the build (mkdocs 1.4 checks only that the page exists).
"""
import html
import json
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor

from mkdocs.exceptions import PluginError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_ids = {}  # page url -> ids on it
_links = []  # (page url, href)


def _stride(*args):
    exe = os.environ.get("STRIDE_EXE") or os.path.join(ROOT, "build", "bin", "stride")
    if not os.path.exists(exe):
        raise PluginError(f"the plugin and CLI reference pages need the stride command: {exe} does not exist "
                          "(build it with ./stride or scripts/setup, or set STRIDE_EXE)")
    r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise PluginError(f"stride {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return r.stdout


def _type_of(s):
    if "type" in s:
        t = s["type"]
        return " or ".join(t) if isinstance(t, list) else t
    if "const" in s:
        return json.dumps(s["const"])
    if "enum" in s:
        return " , ".join(json.dumps(v) for v in s["enum"])
    if "$ref" in s:
        return "see " + s["$ref"].rsplit("/", 1)[-1]
    for k in ("anyOf", "oneOf"):
        if k in s:
            parts = [_type_of(x) for x in s[k]]
            parts = [p for p in parts if p and p != "see variable"]
            return " or ".join(dict.fromkeys(parts))
    return "any"


def _rows(schema, node, pointer, out):
    """Rows (pointer, type, description) of every key under `node`, depth first."""
    if "$ref" in node:
        target = schema
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        merged = dict(target)
        merged.update({k: v for k, v in node.items() if k != "$ref"})
        node = merged
    for key, sub in node.get("properties", {}).items():
        p = pointer + "/" + key.replace("~", "~0").replace("/", "~1")
        _row(schema, sub, p, out)
    add = node.get("additionalProperties")
    if isinstance(add, dict) and (add.get("properties") or add.get("$ref")):
        _rows(schema, add, pointer + "/*", out)
    items = node.get("items")
    if isinstance(items, dict):
        _rows(schema, items, pointer + "/N", out)
    for k in ("anyOf", "oneOf"):
        for alt in node.get(k, []):
            if alt.get("properties"):
                _rows(schema, alt, pointer, out)
    then = node.get("then")
    if isinstance(then, dict):
        _rows(schema, then, pointer, out)


def _row(schema, sub, pointer, out):
    resolved = sub
    if "$ref" in sub:
        target = schema
        for part in sub["$ref"].lstrip("#/").split("/"):
            target = target[part]
        resolved = dict(target, **{k: v for k, v in sub.items() if k != "$ref"})
    out.append((pointer, _type_of(resolved), resolved.get("description", "")))
    _rows(schema, resolved, pointer, out)


def schema_table(kind):
    with open(os.path.join(ROOT, "docs", "schema", kind + ".schema.json")) as f:
        schema = json.load(f)
    rows = []
    _rows(schema, schema, "", rows)
    lines = ["| key | type | meaning |", "|---|---|---|"]
    for pointer, typ, desc in rows:
        cell = lambda t: t.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{cell(pointer)}` | {cell(typ)} | {cell(desc)} |")
    return "\n".join(lines)


def cli_reference():
    commands = (["run"], ["validate"], ["sweep"], ["plugins"], ["plugins", "describe"], ["export"])
    with ThreadPoolExecutor(8) as pool:
        texts = list(pool.map(lambda args: _stride(*args).rstrip(), [["help"]] + [c + ["--help"] for c in commands]))
    parts = ["## stride help", "", "```", texts[0], "```", ""]
    for cmd, text in zip(commands, texts[1:]):
        parts += [f"## stride {' '.join(cmd)}", "", "```", text, "```", ""]
    return "\n".join(parts)


def _cell(v):
    return "" if v is None else str(v).replace("|", "\\|").replace("\n", " ")


def plugins_page():
    listing = json.loads(_stride("plugins", "--json"))
    out = []
    by_kind = {}
    for p in listing["plugins"]:
        by_kind.setdefault(p["kind"], []).append(p)
    # Each call waits mostly on loading: run them side by side.
    with ThreadPoolExecutor(8) as pool:
        described = dict(zip([p["name"] for p in listing["plugins"]],
                             pool.map(lambda p: json.loads(_stride("plugins", "describe", p["name"], "--json")),
                                      listing["plugins"])))
    for kind in ("subsystem", "formulation", "integrator", "extrapolator"):
        if kind not in by_kind:
            continue
        out += [f"## {kind.capitalize()}s", ""]
        for p in sorted(by_kind[kind], key=lambda p: p["name"]):
            d = described[p["name"]]
            out += [f"### {p['name']}", "", f"{d.get('description', '')} (version {d.get('version', '')})", ""]
            params = d.get("parameters", [])
            if params:
                out += ["| parameter | type | unit | default | range | meaning |", "|---|---|---|---|---|---|"]
                for q in params:
                    rng = "" if q.get("min") is None and q.get("max") is None else f"[{q.get('min', '')}, {q.get('max', '')}]"
                    default = json.dumps(q["default"]) if "default" in q else "(required)"
                    if len(default) > 60:
                        default = default[:57] + "..."
                    out.append(f"| `{q['name']}` | {_cell(q.get('type'))} | {_cell(q.get('unit'))} | `{_cell(default)}` "
                               f"| {_cell(rng)} | {_cell(q.get('doc'))} |")
                out.append("")
            ports = d.get("ports", [])
            if ports:
                out += ["| port | direction | size | unit | meaning |", "|---|---|---|---|---|"]
                for q in ports:
                    out.append(f"| `{q['name']}` | {q.get('direction', '')} | {q.get('size', '')} | {_cell(q.get('unit'))} "
                               f"| {_cell(q.get('doc'))} |")
                out.append("")
    return "\n".join(out) + "\n"


def on_page_markdown(markdown, page, config, files):
    markdown = re.sub(r"<!-- schema-table: (\w+) -->", lambda m: schema_table(m.group(1)), markdown)
    if "<!-- plugin-reference -->" in markdown:
        markdown = markdown.replace("<!-- plugin-reference -->", plugins_page())
    if "<!-- stride-help -->" in markdown:
        markdown = markdown.replace("<!-- stride-help -->", cli_reference())
    return markdown


def on_page_content(content, page, config, files):
    url = "/" + page.url
    _ids[url] = set(re.findall(r'\sid="([^"]+)"', content))
    for href in re.findall(r'<a [^>]*href="([^"]+)"', content):
        _links.append((url, html.unescape(href)))
    return content


def on_post_build(config):
    broken = []
    for url, href in _links:
        if "#" not in href or re.match(r"^[a-z]+:", href):
            continue
        path, anchor = href.split("#", 1)
        target = os.path.normpath(os.path.join(url if url.endswith("/") else os.path.dirname(url), path)) if path else url
        target = target.rstrip("/") + "/"
        if target == "//":
            target = "/"
        ids = _ids.get(target)
        if ids is None:
            continue  # not a page (a schema file, an image)
        if anchor and anchor not in ids:
            broken.append(f"{url}: {href} (no id \"{anchor}\" on {target})")
    if broken:
        raise PluginError("links to anchors that do not exist:\n  " + "\n  ".join(broken))
