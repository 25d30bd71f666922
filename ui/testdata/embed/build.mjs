// Builds the framework chat pages of the <hitl-prompt> browser tests
// (ui/embed_test.go) into the directory given: React's JSX and the
// Svelte component compiled and bundled with esbuild, the Vue template
// compiled with @vue/compiler-dom. The packages are the pinned ones
// test.sh installs into ./node_modules.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { compile as compileSvelte } from "svelte/compiler";
import { compile as compileVue } from "@vue/compiler-dom";

const here = path.dirname(fileURLToPath(import.meta.url));
const out = process.argv[2];
if (!out) throw new Error("usage: node build.mjs OUTDIR");

// Svelte components, compiled for the browser.
const sveltePlugin = {
  name: "svelte",
  setup(build) {
    build.onLoad({ filter: /\.svelte$/ }, async (args) => {
      const source = await readFile(args.path, "utf8");
      const { js } = compileSvelte(source, { filename: args.path, generate: "client" });
      return { contents: js.code, loader: "js", resolveDir: path.dirname(args.path) };
    });
  },
};

// Vue's template, compiled to a render function module.
const template = await readFile(path.join(here, "vue.html.tmpl"), "utf8");
const { code } = compileVue(template, { mode: "module", isCustomElement: (tag) => tag === "hitl-prompt" });
const vueRender = path.join(out, "vue-render.js");
await writeFile(vueRender, code);

const common = {
  bundle: true, minifySyntax: true, format: "esm", platform: "browser", target: "es2022", logLevel: "warning",
  nodePaths: [path.join(here, "node_modules")],
  define: { "process.env.NODE_ENV": '"production"', __VUE_OPTIONS_API__: "true", __VUE_PROD_DEVTOOLS__: "false", __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: "false" },
  conditions: ["browser", "production"],
};
await Promise.all([
  esbuild.build({ ...common, entryPoints: [path.join(here, "react.jsx")], outfile: path.join(out, "react.js"), jsx: "automatic" }),
  esbuild.build({ ...common, entryPoints: [path.join(here, "svelte-main.js")], outfile: path.join(out, "svelte.js"), plugins: [sveltePlugin] }),
  esbuild.build({ ...common, entryPoints: [path.join(here, "vue-main.js")], outfile: path.join(out, "vue.js"),
    alias: { "vue-render": vueRender } }),
]);
