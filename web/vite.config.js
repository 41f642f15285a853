// Builds the browser UI into internal/webui/dist, which the pisces binary
// embeds. The output must be reproducible: file names carry content hashes,
// and nothing depends on the time or the machine's paths.
import { defineConfig } from "vite";
import { fileURLToPath } from "node:url";

// `npm run dev` serves the page with live reload and passes /ws on to a
// server on 127.0.0.1:4781 with the token of PISCES_WEB_TOKEN (start that
// server with --web-allowed-origin http://localhost:5173).
const token = process.env.PISCES_WEB_TOKEN;

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  server: {
    proxy: {
      "/ws": {
        target: "http://127.0.0.1:4781",
        ws: true,
        headers: token ? { Authorization: "Bearer " + token } : {},
      },
    },
  },
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
