// Renders Markdown with the page's renderer: reads a JSON array of
// strings on stdin and writes a JSON array of HTML strings (or
// {"error": message}) to stdout. Usage: node render.js markdown.js
"use strict";
var fs = require("fs");
var vm = require("vm");
var dom = require("./dom.js");

vm.runInThisContext(fs.readFileSync(process.argv[2], "utf8"), { filename: "markdown.js" });
var inputs = JSON.parse(fs.readFileSync(0, "utf8"));
var out = inputs.map(function (src) {
  try {
    return dom.serialize(mdRender(dom.document, src));
  } catch (e) {
    return { error: String(e && e.stack || e) };
  }
});
process.stdout.write(JSON.stringify(out));
