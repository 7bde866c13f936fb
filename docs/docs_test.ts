import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);

/** Guides another branch writes; their links are checked once they exist. */
const WRITTEN_ELSEWHERE = new Set(["docs/contact-tokens.md", "docs/postgres-engine.md"]);

/** The markdown files a reader of the repository meets first. */
function pages(): string[] {
  const docs = [...Deno.readDirSync(new URL("docs/", ROOT))].filter((e) => e.name.endsWith(".md")).map((e) => e.name);
  return ["README.md", "bench/README.md", "bench/RESULTS.md", ...docs.sort().map((name) => `docs/${name}`)];
}

/** The targets of the markdown links of `text` (`[label](target)`), code spans left out. */
function linkTargets(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map(([, target]) => target);
}

Deno.test("linkTargets() reads markdown links and skips code", () => {
  const text = "See [a](docs/a.md#x) and `[b](no.md)`.\n```sh\n[c](no.md)\n```\n[d](https://example.com)";
  assert.deepEqual(linkTargets(text), ["docs/a.md#x", "https://example.com"]);
});

Deno.test("README.md opens with the two commands, stays under 200 lines and points at the guides", async () => {
  const readme = await Deno.readTextFile(new URL("README.md", ROOT));
  const lines = readme.split("\n");
  assert.ok(lines.length < 200, `README.md has ${lines.length} lines`);
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  assert.match(firstBlock, /^deno task start\b/m);
  assert.match(firstBlock, /^deno task test\b/m);
  assert.ok(readme.indexOf(firstBlock) < readme.indexOf("\n## "), "the two commands come before any section");
  assert.ok(linkTargets(readme).includes("docs/README.md"));
});

Deno.test("every link of the README and the guides stays in the repository and finds its file", async () => {
  for (const page of pages()) {
    const text = await Deno.readTextFile(new URL(page, ROOT));
    for (const target of linkTargets(text)) {
      assert.doesNotMatch(target, /^[a-z]+:/i, `${page} links outside the repository: ${target}`);
      const path = target.split("#")[0];
      if (path === "") continue;
      const url = new URL(path, new URL(page, ROOT));
      assert.ok(url.href.startsWith(ROOT.href), `${page} links outside the repository: ${target}`);
      const relative = url.href.slice(ROOT.href.length);
      if (WRITTEN_ELSEWHERE.has(relative)) continue;
      const found = await Deno.stat(url).then(() => true, () => false);
      assert.ok(found, `${page} links to a missing file: ${target}`);
    }
  }
});

Deno.test("docs/configuration.md names every variable shared/config.ts reads", async () => {
  const source = await Deno.readTextFile(new URL("shared/config.ts", ROOT));
  const schema = source.slice(
    source.indexOf("const ConfigSchema"),
    source.indexOf("});", source.indexOf("const ConfigSchema")),
  );
  const names = [...schema.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)].map(([, name]) => name);
  assert.ok(names.length > 50, `read ${names.length} variables from shared/config.ts`);
  const guide = await Deno.readTextFile(new URL("docs/configuration.md", ROOT));
  const missing = names.filter((name) => !guide.includes(`\`${name}\``));
  assert.deepEqual(missing, []);
});
