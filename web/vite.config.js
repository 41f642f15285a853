// Builds the browser UI into internal/webui/dist, which the pisces binary
// embeds. The output must be reproducible: file names carry content hashes,
// and nothing depends on the time or the machine's paths.
import { defineConfig } from "vite";
import { fileURLToPath } from "node:url";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: fileURLToPath(new URL("../internal/webui/dist", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1500,
  },
});
