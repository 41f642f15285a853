// A minimal stand-in for the browser's document, enough for the page's
// Markdown renderer, with a serialiser that writes HTML the way Go's
// html.EscapeString escapes text and attribute values. It throws on any
// element or attribute the renderer must never create.
"use strict";

var allowedTags = {};
("p h1 h2 h3 h4 h5 h6 hr div pre code span blockquote ul ol li input table thead tbody tr th td " +
  "em strong del br img").split(" ").forEach(function (t) { allowedTags[t] = true; });
var allowedAttrs = { class: true, start: true, checked: true, disabled: true, type: true, src: true, alt: true };
var dataImage = /^data:image\/(png|jpeg|jpg|gif|webp);base64,[A-Za-z0-9+\/=\s]+$/;

function esc(s) {
  return s.replace(/[&'<>"]/g, function (c) {
    return { "&": "&amp;", "'": "&#39;", "<": "&lt;", ">": "&gt;", "\"": "&#34;" }[c];
  });
}

function Node(kind, name) {
  this.kind = kind; // "el", "text" or "frag"
  this.name = name;
  this.attrs = [];
  this.children = [];
  this.data = "";
}
Node.prototype.appendChild = function (c) {
  if (c.kind === "frag") {
    for (var k = 0; k < c.children.length; k++) this.children.push(c.children[k]);
    c.children = [];
  } else {
    this.children.push(c);
  }
  return c;
};
Node.prototype.setAttribute = function (k, v) {
  if (typeof k !== "string" || typeof v !== "string") throw new Error("setAttribute with a non-string");
  if (allowedAttrs[k] !== true) throw new Error("attribute " + k + " on <" + this.name + ">");
  if (k === "src" && (this.name !== "img" || !dataImage.test(v))) throw new Error("src " + v + " on <" + this.name + ">");
  if (k === "type" && v !== "checkbox") throw new Error("type " + v);
  for (var i = 0; i < this.attrs.length; i++) {
    if (this.attrs[i][0] === k) { this.attrs[i][1] = v; return; }
  }
  this.attrs.push([k, v]);
};

var voids = { br: 1, hr: 1, img: 1, input: 1 };

function serialize(n) {
  if (n.kind === "text") return esc(n.data);
  var inner = n.children.map(serialize).join("");
  if (n.kind === "frag") return inner;
  var open = "<" + n.name + n.attrs.map(function (a) { return " " + a[0] + "=\"" + esc(a[1]) + "\""; }).join("") + ">";
  return voids[n.name] ? open : open + inner + "</" + n.name + ">";
}

var document = {
  createElement: function (name) {
    if (typeof name !== "string" || allowedTags[name] !== true) throw new Error("element <" + name + ">");
    return new Node("el", name);
  },
  createTextNode: function (s) {
    var t = new Node("text", "#text");
    t.data = String(s);
    return t;
  },
  createDocumentFragment: function () { return new Node("frag", "#fragment"); }
};

module.exports = { document: document, serialize: serialize };
