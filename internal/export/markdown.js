// The Markdown renderer of exported pages.
//
// The page carries every message's Markdown source as escaped text in an
// element marked data-md; this script parses that text (read back with
// textContent) and replaces it with the rendered nodes. Rendering only
// ever calls createElement with the fixed tag names below, createTextNode,
// and setAttribute with fixed names; text from the session is never parsed
// as HTML, so nothing a model or a tool wrote can become markup or script.
// On top of that:
//   - raw HTML, inline or in blocks, is shown as the text it is;
//   - links are shown as their text followed by the address, with no href;
//   - images are shown as their alt text and address, except inline
//     data: images of the common raster types;
//   - fenced and indented code is highlighted by mdHighlight.
//
// The dialect is CommonMark's block and inline structure with GitHub's
// tables, strikethrough and task lists.

"use strict";

var mdReFence = /^ {0,3}(`{3,}|~{3,})(.*)$/;
var mdReFenceClose = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
var mdReATX = /^ {0,3}(#{1,6})(?:[ \t](.*))?$/;
var mdReHR = /^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$/;
var mdReSetext = /^ {0,3}(=+|-+)[ \t]*$/;
var mdReQuote = /^ {0,3}> ?/;
var mdReBullet = /^ {0,3}([-+*])(?=[ \t]|$)/;
var mdReOrdered = /^ {0,3}(\d{1,9})([.)])(?=[ \t]|$)/;
var mdReTableDelim = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
var mdReRef = /^ {0,3}\[((?:[^\\\[\]]|\\.){1,999})\]:[ \t]*(?:\n[ \t]*)?(<[^<>\n]*>|[^\s<][^\s]*)(?:(?:[ \t]+|[ \t]*\n[ \t]*)("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\((?:[^()\\]|\\.)*\)))?[ \t]*(?:\n|$)/;
var mdReDataImage = /^data:image\/(png|jpeg|jpg|gif|webp);base64,[A-Za-z0-9+\/=\s]+$/;
var mdHTMLBlockNames = "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h1|h2|h3|h4|h5|h6|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul";
var mdAttr = "(?:[ \\t\\n]+[A-Za-z_:][A-Za-z0-9_.:-]*(?:[ \\t\\n]*=[ \\t\\n]*(?:[^ \\t\\n\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)";
var mdOpenTag = "<[A-Za-z][A-Za-z0-9-]*" + mdAttr + "*[ \\t\\n]*\\/?>";
var mdCloseTag = "<\\/[A-Za-z][A-Za-z0-9-]*[ \\t\\n]*>";
var mdHTMLStarts = [
  [/^ {0,3}<(?:script|pre|style|textarea)(?:[ \t>]|$)/i, /<\/(?:script|pre|style|textarea)>/i],
  [/^ {0,3}<!-{2}/, /-{2}>/],
  [/^ {0,3}<\?/, /\?>/],
  [/^ {0,3}<![A-Za-z]/, />/],
  [/^ {0,3}<!\[CDATA\[/, /\]\]>/],
  [new RegExp("^ {0,3}</?(?:" + mdHTMLBlockNames + ")(?:[ \\t>]|/>|$)", "i"), null],
  [new RegExp("^ {0,3}(?:" + mdOpenTag + "|" + mdCloseTag + ")[ \\t]*$"), null]
];
var mdReInlineHTML = new RegExp("^(?:" + mdOpenTag + "|" + mdCloseTag +
  "|<!-{4}>|<!-{3}>|<!-{2}[\\s\\S]*?-{2}>|<\\?[\\s\\S]*?\\?>|<![A-Za-z][^>]*>|<!\\[CDATA\\[[\\s\\S]*?\\]\\]>)");
var mdReAutolink = /^<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*)>/;
var mdReEmailAutolink = /^<([A-Za-z0-9.!#$%&'*+\/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)>/;
var mdPunct = /^[\p{P}\p{S}]/u;
var mdEntities = {
  amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: "\u00a0", copy: "\u00a9", reg: "\u00ae",
  trade: "\u2122", hellip: "\u2026", mdash: "\u2014", ndash: "\u2013", lsquo: "\u2018", rsquo: "\u2019",
  ldquo: "\u201c", rdquo: "\u201d", laquo: "\u00ab", raquo: "\u00bb", middot: "\u00b7", bull: "\u2022",
  deg: "\u00b0", plusmn: "\u00b1", times: "\u00d7", divide: "\u00f7", para: "\u00b6", sect: "\u00a7",
  euro: "\u20ac", pound: "\u00a3", yen: "\u00a5", cent: "\u00a2", larr: "\u2190", rarr: "\u2192",
  uarr: "\u2191", darr: "\u2193", harr: "\u2194", rArr: "\u21d2", lArr: "\u21d0", hArr: "\u21d4",
  ne: "\u2260", le: "\u2264", ge: "\u2265", infin: "\u221e", check: "\u2713", auml: "\u00e4",
  ouml: "\u00f6", uuml: "\u00fc", Auml: "\u00c4", Ouml: "\u00d6", Uuml: "\u00dc", szlig: "\u00df",
  eacute: "\u00e9", egrave: "\u00e8", aacute: "\u00e1", agrave: "\u00e0", ccedil: "\u00e7"
};

// mdRender returns the nodes of src, created through doc.
function mdRender(doc, src) {
  src = String(src).replace(/\r\n?/g, "\n").replace(/\u0000/g, "\ufffd").replace(/\n$/, "");
  var refs = Object.create(null);
  var blocks = mdBlocks(src.split("\n"), refs);
  var frag = doc.createDocumentFragment();
  mdAppendBlocks(doc, frag, blocks, refs, false);
  return frag;
}

// ---------------------------------------------------------------------------
// Blocks

function mdBlank(line) { return /^[ \t]*$/.test(line); }

// mdIndent is the column of the first non-blank character (tabs stop every
// four columns).
function mdIndent(line) {
  var col = 0;
  for (var k = 0; k < line.length; k++) {
    var c = line.charAt(k);
    if (c === " ") col++;
    else if (c === "\t") col += 4 - col % 4;
    else break;
  }
  return col;
}

// mdStrip removes n columns of leading white space from line.
function mdStrip(line, n) {
  var col = 0, k = 0;
  while (k < line.length && col < n) {
    var c = line.charAt(k);
    if (c === " ") { col++; k++; continue; }
    if (c !== "\t") break;
    var w = 4 - col % 4;
    if (col + w > n) return " ".repeat(col + w - n) + line.slice(k + 1);
    col += w;
    k++;
  }
  return line.slice(k);
}

function mdFenceOpen(line) {
  var m = mdReFence.exec(line);
  if (!m || (m[1].charAt(0) === "`" && m[2].indexOf("`") >= 0)) return null;
  return m;
}

// mdHTMLKind is the kind of HTML block line starts (index into
// mdHTMLStarts), or -1. The last kind cannot interrupt a paragraph.
function mdHTMLKind(line, inPara) {
  for (var k = 0; k < mdHTMLStarts.length; k++) {
    if (k === mdHTMLStarts.length - 1 && inPara) break;
    if (mdHTMLStarts[k][0].test(line)) return k;
  }
  return -1;
}

// mdListMarker reads a list item marker: its kind ("-", "+", "*", "." or
// ")"), start number, and the columns the item's content is indented by.
function mdListMarker(line) {
  var m = mdReBullet.exec(line), kind, start = 0;
  if (m) {
    kind = m[1];
  } else if ((m = mdReOrdered.exec(line))) {
    kind = m[2];
    start = parseInt(m[1], 10);
  } else {
    return null;
  }
  var rest = line.slice(m[0].length);
  var width = mdIndent(m[0]) + m[0].trim().length;
  var spaces = mdIndent(rest);
  var empty = mdBlank(rest);
  if (empty) spaces = 1;
  else if (spaces > 4) spaces = 1;
  return { kind: kind, start: start, content: width + spaces, empty: empty, markerEnd: m[0].length, width: width };
}

// mdStartsBlock reports whether line begins a block other than a
// paragraph (inPara: it would interrupt one).
function mdStartsBlock(line, inPara) {
  if (mdIndent(line) >= 4) return false;
  if (mdFenceOpen(line) || mdReATX.test(line) || mdReHR.test(line) || mdReQuote.test(line)) return true;
  if (mdHTMLKind(line, inPara) >= 0) return true;
  var lm = mdListMarker(line);
  if (!lm) return false;
  if (!inPara) return true;
  return !lm.empty && (lm.kind === "-" || lm.kind === "+" || lm.kind === "*" || lm.start === 1);
}

// mdBlocks parses lines into blocks. The result's gap is true when a blank
// line separates two of its blocks (which makes a list item loose).
function mdBlocks(lines, refs) {
  var out = [], para = null, blank = false, i = 0;
  out.gap = false;
  function add(b) {
    if (blank && out.length) out.gap = true;
    blank = false;
    out.push(b);
  }
  function endPara() {
    if (!para) return;
    var text = mdTakeRefs(para.join("\n"), refs);
    para = null;
    if (text !== "") add({ t: "p", text: text });
  }
  while (i < lines.length) {
    var line = lines[i], m;
    if (mdBlank(line)) {
      endPara();
      blank = true;
      i++;
      continue;
    }
    var ind = mdIndent(line);
    if (ind >= 4) {
      if (para) { para.push(line); i++; continue; }
      var code = [];
      while (i < lines.length && (mdBlank(lines[i]) || mdIndent(lines[i]) >= 4)) {
        code.push(mdStrip(lines[i], 4));
        i++;
      }
      while (code.length && mdBlank(code[code.length - 1])) code.pop();
      add({ t: "code", lang: "", text: code.join("\n") + "\n" });
      continue;
    }
    if (para && (m = mdReSetext.exec(line)) && !mdTableStart(para, line)) {
      var heading = mdTakeRefs(para.join("\n"), refs);
      para = null;
      if (heading !== "") {
        add({ t: "h", level: m[1].charAt(0) === "=" ? 1 : 2, text: heading.trim() });
        i++;
        continue;
      }
    }
    if (para && mdTableStart(para, line)) {
      var head = para.pop();
      endPara();
      i = mdTable(lines, i, head, add);
      continue;
    }
    if ((m = mdFenceOpen(line))) {
      endPara();
      var fence = m[1], body = [];
      i++;
      while (i < lines.length) {
        var c = mdReFenceClose.exec(lines[i]);
        if (c && c[1].charAt(0) === fence.charAt(0) && c[1].length >= fence.length) { i++; break; }
        body.push(mdStrip(lines[i], ind));
        i++;
      }
      var info = mdUnescape(m[2].trim()).split(/[ \t]/)[0];
      add({ t: "code", lang: info, text: body.length ? body.join("\n") + "\n" : "" });
      continue;
    }
    if ((m = mdReATX.exec(line))) {
      endPara();
      var t = (m[2] || "").replace(/(?:^|[ \t]+)#+[ \t]*$/, "").trim();
      add({ t: "h", level: m[1].length, text: t });
      i++;
      continue;
    }
    if (mdReHR.test(line)) {
      endPara();
      add({ t: "hr" });
      i++;
      continue;
    }
    if (mdReQuote.test(line)) {
      endPara();
      var inner = [], lazyOK = false;
      while (i < lines.length) {
        var l = lines[i];
        if (mdReQuote.test(l)) {
          var stripped = l.replace(/^ {0,3}>/, "");
          stripped = stripped.charAt(0) === "\t" ? mdStrip(stripped, 1 + 1) : stripped.replace(/^ /, "");
          inner.push(stripped);
          lazyOK = !mdBlank(stripped) && mdIndent(stripped) < 4 && !mdFenceOpen(stripped);
          i++;
          continue;
        }
        if (lazyOK && !mdBlank(l) && !mdStartsBlock(l, true) && !mdListMarker(l)) {
          inner.push(l);
          i++;
          continue;
        }
        break;
      }
      add({ t: "quote", children: mdBlocks(inner, refs) });
      continue;
    }
    var kind = mdHTMLKind(line, !!para);
    if (kind >= 0) {
      endPara();
      var html = [], end = mdHTMLStarts[kind][1];
      while (i < lines.length) {
        if (!end && mdBlank(lines[i])) break;
        html.push(lines[i]);
        i++;
        if (end && end.test(html[html.length - 1])) break;
      }
      add({ t: "html", text: html.join("\n") });
      continue;
    }
    var lm = mdListMarker(line);
    if (lm && (!para || mdStartsBlock(line, true))) {
      endPara();
      i = mdList(lines, i, lm, refs, add);
      continue;
    }
    if (!para) {
      para = [];
      if (blank && out.length) out.gap = true;
      blank = false;
    }
    para.push(line.replace(/^[ \t]+/, ""));
    i++;
  }
  endPara();
  return out;
}

// mdTakeRefs removes the link reference definitions at the start of a
// paragraph's text, keeping the first definition of each label.
function mdTakeRefs(text, refs) {
  var m;
  while (text.charAt(0) === "[" && (m = mdReRef.exec(text))) {
    var label = mdNormLabel(m[1]);
    if (label === "") break;
    if (!(label in refs)) {
      var dest = m[2];
      if (dest.charAt(0) === "<") dest = dest.slice(1, -1);
      refs[label] = mdUnescape(dest);
    }
    text = text.slice(m[0].length);
  }
  return text;
}

function mdNormLabel(s) { return s.trim().replace(/[ \t\n]+/g, " ").toLowerCase(); }

// mdList parses a list starting at line i; it returns the next line.
function mdList(lines, i, first, refs, add) {
  var list = { t: "list", ordered: first.kind === "." || first.kind === ")", start: first.start, loose: false, items: [] };
  while (i < lines.length) {
    var j = i;
    while (j < lines.length && mdBlank(lines[j])) j++;
    var lm = j < lines.length ? mdListMarker(lines[j]) : null;
    if (!lm || lm.kind !== first.kind || mdReHR.test(lines[j])) break;
    if (j > i) list.loose = true;
    i = j;
    var itemLines = [lines[i].slice(lm.markerEnd)];
    itemLines[0] = lm.empty ? "" : mdStrip(" ".repeat(lm.width) + itemLines[0], lm.content);
    var startsEmpty = lm.empty, lastBlank = false, lazyOK = !lm.empty;
    i++;
    while (i < lines.length) {
      var l = lines[i];
      if (mdBlank(l)) {
        if (startsEmpty && itemLines.length === 1) break;
        itemLines.push("");
        lastBlank = true;
        i++;
        continue;
      }
      if (mdIndent(l) >= lm.content) {
        itemLines.push(mdStrip(l, lm.content));
        lastBlank = false;
        i++;
        continue;
      }
      if (!lastBlank && lazyOK && !mdStartsBlock(l, true) && !mdListMarker(l)) {
        itemLines.push(l);
        i++;
        continue;
      }
      break;
    }
    // Blank lines after the item belong to what follows it.
    while (itemLines.length > 1 && mdBlank(itemLines[itemLines.length - 1])) {
      itemLines.pop();
      i--;
    }
    var children = mdBlocks(itemLines, refs);
    if (children.gap) list.loose = true;
    var task = null;
    if (children.length && children[0].t === "p") {
      var tm = /^\[([ xX])\](?:[ \t]+|$)/.exec(children[0].text);
      if (tm && children[0].text.length > 3) {
        task = tm[1] !== " ";
        children[0].text = children[0].text.slice(tm[0].length);
      }
    }
    list.items.push({ task: task, children: children });
  }
  add(list);
  return i;
}

function mdSplitRow(line) {
  var s = line.trim();
  if (s.charAt(0) === "|") s = s.slice(1);
  if (s.charAt(s.length - 1) === "|" && s.charAt(s.length - 2) !== "\\") s = s.slice(0, -1);
  var cells = [], cur = "";
  for (var k = 0; k < s.length; k++) {
    var c = s.charAt(k);
    if (c === "\\" && s.charAt(k + 1) === "|") { cur += "|"; k++; continue; }
    if (c === "|") { cells.push(cur.trim()); cur = ""; continue; }
    cur += c;
  }
  cells.push(cur.trim());
  return cells;
}

// mdTableStart reports whether line is the delimiter row of a table whose
// header is the paragraph's last line.
function mdTableStart(para, line) {
  if (!para.length || !mdReTableDelim.test(line)) return false;
  if (line.indexOf("|") < 0 && para[para.length - 1].indexOf("|") < 0) return false;
  return mdSplitRow(line).length === mdSplitRow(para[para.length - 1]).length;
}

function mdTable(lines, i, head, add) {
  var align = mdSplitRow(lines[i]).map(function (d) {
    var l = d.charAt(0) === ":", r = d.charAt(d.length - 1) === ":";
    return l && r ? "center" : r ? "right" : l ? "left" : "";
  });
  var table = { t: "table", align: align, head: mdSplitRow(head), rows: [] };
  i++;
  while (i < lines.length && !mdBlank(lines[i]) && !mdStartsBlock(lines[i], false)) {
    table.rows.push(mdSplitRow(lines[i]));
    i++;
  }
  add(table);
  return i;
}

// ---------------------------------------------------------------------------
// Rendering blocks

function mdEl(doc, parent, tag, cls) {
  var el = doc.createElement(tag);
  if (cls) el.setAttribute("class", cls);
  parent.appendChild(el);
  return el;
}

function mdText(doc, parent, s) { parent.appendChild(doc.createTextNode(s)); }

function mdAppendBlocks(doc, parent, blocks, refs, tight) {
  for (var k = 0; k < blocks.length; k++) {
    var b = blocks[k];
    switch (b.t) {
      case "p":
        if (tight) {
          mdAppendInline(doc, parent, b.text, refs);
          if (k < blocks.length - 1) mdText(doc, parent, "\n");
        } else mdAppendInline(doc, mdEl(doc, parent, "p"), b.text, refs);
        break;
      case "h":
        mdAppendInline(doc, mdEl(doc, parent, "h" + b.level), b.text, refs);
        break;
      case "hr":
        mdEl(doc, parent, "hr");
        break;
      case "code":
        mdCodeBlock(doc, parent, b.text, b.lang);
        break;
      case "html":
        mdText(doc, mdEl(doc, parent, "pre", "md-raw"), b.text.replace(/\n+$/, ""));
        break;
      case "quote":
        mdAppendBlocks(doc, mdEl(doc, parent, "blockquote"), b.children, refs, false);
        break;
      case "list":
        var list = mdEl(doc, parent, b.ordered ? "ol" : "ul");
        if (b.ordered && b.start !== 1) list.setAttribute("start", String(b.start));
        for (var n = 0; n < b.items.length; n++) {
          var it = b.items[n], li = mdEl(doc, list, "li");
          if (it.task !== null) {
            var box = mdEl(doc, li, "input");
            if (it.task) box.setAttribute("checked", "");
            box.setAttribute("disabled", "");
            box.setAttribute("type", "checkbox");
            mdText(doc, li, " ");
          }
          mdAppendBlocks(doc, li, it.children, refs, !b.loose);
        }
        break;
      case "table":
        var table = mdEl(doc, parent, "table");
        var tr = mdEl(doc, mdEl(doc, table, "thead"), "tr");
        for (var h = 0; h < b.head.length; h++) {
          mdAppendInline(doc, mdEl(doc, tr, "th", b.align[h] ? "al-" + b.align[h] : ""), b.head[h], refs);
        }
        if (b.rows.length) {
          var tbody = mdEl(doc, table, "tbody");
          for (var r = 0; r < b.rows.length; r++) {
            var row = mdEl(doc, tbody, "tr");
            for (var c = 0; c < b.head.length; c++) {
              if (c >= b.rows[r].length) {
                mdEl(doc, row, "td");
                continue;
              }
              mdAppendInline(doc, mdEl(doc, row, "td", b.align[c] ? "al-" + b.align[c] : ""), b.rows[r][c], refs);
            }
          }
        }
        break;
    }
  }
}

function mdCodeBlock(doc, parent, text, lang) {
  var box = mdEl(doc, parent, "div", "code");
  if (lang) mdText(doc, mdEl(doc, box, "div", "code-lang"), lang);
  var code = mdEl(doc, mdEl(doc, box, "pre"), "code");
  var toks = mdHighlight(text, lang);
  for (var k = 0; k < toks.length; k++) {
    if (toks[k][0]) mdText(doc, mdEl(doc, code, "span", toks[k][0]), toks[k][1]);
    else mdText(doc, code, toks[k][1]);
  }
}

// ---------------------------------------------------------------------------
// Inlines

// mdUnescape resolves backslash escapes and entity references.
function mdUnescape(s) {
  return s.replace(/\\([!-\/:-@\[-`{-~])|&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/g, function (all, esc, ent) {
    if (esc) return esc;
    return mdEntity(ent) || all;
  });
}

function mdEntity(ent) {
  if (ent.charAt(0) === "#") {
    var n = ent.charAt(1) === "x" || ent.charAt(1) === "X" ? parseInt(ent.slice(2), 16) : parseInt(ent.slice(1), 10);
    if (n === 0 || n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff)) return "\ufffd";
    return String.fromCodePoint(n);
  }
  return Object.prototype.hasOwnProperty.call(mdEntities, ent) ? mdEntities[ent] : "";
}

// Inline nodes form a doubly linked list while they are parsed:
// {t: "text"|"code"|"br"|"soft"|"em"|"strong"|"del"|"link"|"img"|"auto",
//  v: text, c: first child (containers), dest}.

function mdAppendInline(doc, parent, text, refs) {
  var first = mdParseInline(text, refs);
  mdRenderInline(doc, parent, first);
}

function mdNode(t, v) { return { t: t, v: v, prev: null, next: null, c: null }; }

// mdParseInline returns the first of the inline nodes of text.
function mdParseInline(text, refs) {
  var head = mdNode("head", ""), last = head, delims = [], brackets = [];
  function push(n) { n.prev = last; last.next = n; last = n; return n; }
  // Text merges into the text node before it unless that one is a
  // delimiter run or a bracket, which stay separate nodes.
  function pushText(s) {
    if (last.t === "text" && !last.lock) last.v += s;
    else push(mdNode("text", s));
  }
  var i = 0, n = text.length, m;
  while (i < n) {
    var c = text.charAt(i);
    if (c === "\\") {
      var d = text.charAt(i + 1);
      if (d === "\n") {
        push(mdNode("br", ""));
        i += 2;
        while (i < n && (text.charAt(i) === " " || text.charAt(i) === "\t")) i++;
        continue;
      }
      if (d && mdPunct.test(d) && d.charCodeAt(0) < 128) { pushText(d); i += 2; continue; }
      pushText("\\");
      i++;
      continue;
    }
    if (c === "`") {
      var run = /^`+/.exec(text.slice(i))[0], j = i + run.length, found = -1;
      while (j < n) {
        var k = text.indexOf("`", j);
        if (k < 0) break;
        var r2 = /^`+/.exec(text.slice(k))[0];
        if (r2.length === run.length) { found = k; break; }
        j = k + r2.length;
      }
      if (found < 0) { pushText(run); i += run.length; continue; }
      var code = text.slice(i + run.length, found).replace(/\n/g, " ");
      if (code.length >= 2 && code.charAt(0) === " " && code.charAt(code.length - 1) === " " && /[^ ]/.test(code)) code = code.slice(1, -1);
      push(mdNode("code", code));
      i = found + run.length;
      continue;
    }
    if (c === "<") {
      if ((m = mdReAutolink.exec(text.slice(i))) || (m = mdReEmailAutolink.exec(text.slice(i)))) {
        push(mdNode("auto", m[1]));
        i += m[0].length;
        continue;
      }
      if ((m = mdReInlineHTML.exec(text.slice(i)))) {
        pushText(m[0]);
        last.lock = true;
        i += m[0].length;
        continue;
      }
      pushText("<");
      i++;
      continue;
    }
    if (c === "&") {
      if ((m = /^&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/.exec(text.slice(i)))) {
        var e = mdEntity(m[1]);
        pushText(e || m[0]);
        i += m[0].length;
        continue;
      }
      pushText("&");
      i++;
      continue;
    }
    if (c === "\n") {
      var hard = last.t === "text" && !last.lock && / {2,}$/.test(last.v);
      if (last.t === "text" && !last.lock) last.v = last.v.replace(/ +$/, "");
      push(mdNode(hard ? "br" : "soft", ""));
      i++;
      while (i < n && (text.charAt(i) === " " || text.charAt(i) === "\t")) i++;
      continue;
    }
    if (c === "*" || c === "_" || c === "~") {
      var runLen = 1;
      while (text.charAt(i + runLen) === c) runLen++;
      var before = i === 0 ? "\n" : text.charAt(i - 1), after = text.charAt(i + runLen) || "\n";
      var ws = /[\s\u00a0]/, pb = mdIsPunct(before), pa = mdIsPunct(after);
      var leftFlank = !ws.test(after) && (!pa || ws.test(before) || pb);
      var rightFlank = !ws.test(before) && (!pb || ws.test(after) || pa);
      var canOpen, canClose;
      if (c === "_") {
        canOpen = leftFlank && (!rightFlank || pb);
        canClose = rightFlank && (!leftFlank || pa);
      } else {
        canOpen = leftFlank;
        canClose = rightFlank;
      }
      var node = push(mdNode("text", text.substr(i, runLen)));
      node.lock = true;
      if (c !== "~" || runLen <= 2) {
        node.delim = { ch: c, len: runLen, orig: runLen, open: canOpen, close: canClose };
        delims.push(node);
      }
      i += runLen;
      continue;
    }
    if (c === "[" || (c === "!" && text.charAt(i + 1) === "[")) {
      var img = c === "!";
      var bn = push(mdNode("text", img ? "![" : "["));
      bn.lock = true;
      brackets.push({ node: bn, image: img, active: true, delimCount: delims.length, pos: i + (img ? 2 : 1) });
      i += img ? 2 : 1;
      continue;
    }
    if (c === "]") {
      var opener = brackets.pop();
      if (!opener) { pushText("]"); i++; continue; }
      if (!opener.active) { pushText("]"); i++; continue; }
      var label = text.slice(opener.pos, i);
      var link = mdLinkAfter(text, i + 1, label, refs);
      if (!link) { pushText("]"); i++; continue; }
      // The nodes after the opener become the link's children.
      var ln = mdNode(opener.image ? "img" : "link", "");
      ln.dest = link.dest;
      mdProcessEmphasis(delims, opener.delimCount);
      var firstChild = opener.node.next;
      var prevOf = opener.node.prev;
      prevOf.next = null;
      if (firstChild) firstChild.prev = null;
      ln.c = firstChild;
      last = prevOf;
      push(ln);
      delims.length = Math.min(delims.length, opener.delimCount);
      if (!opener.image) {
        for (var b = 0; b < brackets.length; b++) if (!brackets[b].image) brackets[b].active = false;
      }
      i = link.end;
      continue;
    }
    // Plain text up to the next special character.
    var next = text.slice(i).search(/[\\`<&\n*_~\[\]!]/);
    var chunk = next < 0 ? text.slice(i) : next === 0 ? text.charAt(i) : text.slice(i, i + next);
    pushText(chunk);
    i += chunk.length;
  }
  mdProcessEmphasis(delims, 0);
  if (last.t === "text" && !last.lock) last.v = last.v.replace(/[ \t]+$/, "");
  var f = head.next;
  if (f) f.prev = null;
  return f;
}

function mdIsPunct(ch) { return mdPunct.test(ch); }

// mdLinkAfter reads what follows "]": an inline destination "(dest
// "title")" or a reference ("[label]", "[]" or nothing). It returns the
// destination and where the link ends, or null.
function mdLinkAfter(text, i, label, refs) {
  if (text.charAt(i) === "(") {
    var j = i + 1;
    while (j < text.length && /[ \t\n]/.test(text.charAt(j))) j++;
    var dest = "";
    if (text.charAt(j) === "<") {
      var k = j + 1;
      while (k < text.length && text.charAt(k) !== ">" && text.charAt(k) !== "<" && text.charAt(k) !== "\n") {
        if (text.charAt(k) === "\\") k++;
        k++;
      }
      if (text.charAt(k) !== ">") return null;
      dest = text.slice(j + 1, k);
      j = k + 1;
    } else {
      var depth = 0, s = j;
      while (j < text.length) {
        var ch = text.charAt(j);
        if (ch === "\\" && j + 1 < text.length) { j += 2; continue; }
        if (ch === "(") {
          if (++depth > 32) break;
        } else if (ch === ")") {
          if (depth === 0) break;
          depth--;
        } else if (ch <= " ") {
          break;
        }
        j++;
      }
      dest = text.slice(s, j);
    }
    var t = /^(?:[ \t]*\n?[ \t]*)/.exec(text.slice(j))[0];
    var after = j + t.length;
    var title = /^("(?:[^"\\]|\\[\s\S])*"|'(?:[^'\\]|\\[\s\S])*'|\((?:[^()\\]|\\[\s\S])*\))/.exec(text.slice(after));
    if (title && t.length) after += title[0].length;
    else after = j;
    var tail = /^[ \t]*\n?[ \t]*\)/.exec(text.slice(after));
    if (tail) return { dest: mdUnescape(dest), end: after + tail[0].length };
  }
  var m = /^\[((?:[^\\\[\]]|\\.){0,999})\]/.exec(text.slice(i));
  if (m) {
    var key = mdNormLabel(m[1] === "" ? label : m[1]);
    if (key in refs) return { dest: refs[key], end: i + m[0].length };
    return null;
  }
  var own = mdNormLabel(label);
  if (own !== "" && own in refs) return { dest: refs[own], end: i };
  return null;
}

// mdProcessEmphasis turns matched delimiter runs above stack index bottom
// into emphasis, strong emphasis and strikethrough.
function mdProcessEmphasis(delims, bottom) {
  // Where the search for an opener of a kind of closer stopped without
  // success; the next search for that kind stops there too.
  var stops = Object.create(null);
  var k = bottom;
  while (k < delims.length) {
    var closer = delims[k];
    if (!closer.delim || !closer.delim.close) { k++; continue; }
    var cd = closer.delim, found = -1;
    var key = cd.ch + (cd.open ? "1" : "0") + (cd.ch === "~" ? cd.orig : cd.orig % 3);
    for (var o = k - 1; o >= bottom && delims[o] !== stops[key]; o--) {
      var od = delims[o].delim;
      if (!od || od.ch !== cd.ch || !od.open) continue;
      if (cd.ch === "~") {
        if (od.len !== cd.len) continue;
      } else if ((od.close || cd.open) && (od.orig + cd.orig) % 3 === 0 && !(od.orig % 3 === 0 && cd.orig % 3 === 0)) {
        continue;
      }
      found = o;
      break;
    }
    if (found < 0) {
      stops[key] = delims[k - 1];
      if (!cd.open) closer.delim = null;
      k++;
      continue;
    }
    var openerNode = delims[found], od2 = openerNode.delim;
    var use = cd.ch === "~" ? cd.len : (od2.len >= 2 && cd.len >= 2 ? 2 : 1);
    var wrap = mdNode(cd.ch === "~" ? "del" : use === 2 ? "strong" : "em", "");
    // Move the nodes between opener and closer into wrap.
    var inner = openerNode.next;
    if (inner !== closer) {
      wrap.c = inner;
      inner.prev = null;
      closer.prev.next = null;
    }
    openerNode.next = wrap;
    wrap.prev = openerNode;
    wrap.next = closer;
    closer.prev = wrap;
    od2.len -= use;
    cd.len -= use;
    openerNode.v = openerNode.v.slice(0, od2.len);
    closer.v = closer.v.slice(0, cd.len);
    delims.splice(found + 1, k - found - 1);
    k = found + 1;
    if (od2.len === 0) {
      mdUnlink(openerNode);
      delims.splice(found, 1);
      k--;
    }
    if (cd.len === 0) {
      mdUnlink(closer);
      delims.splice(k, 1);
    }
  }
  delims.length = bottom;
}

function mdUnlink(n) {
  if (n.prev) n.prev.next = n.next;
  if (n.next) n.next.prev = n.prev;
  n.prev = n.next = null;
}

// mdPlain is the text under inline nodes (an image's alt text).
function mdPlain(n) {
  var s = "";
  for (; n; n = n.next) {
    if (n.t === "text" || n.t === "code" || n.t === "auto") s += n.v;
    else if (n.t === "soft" || n.t === "br") s += "\n";
    else if (n.c) s += mdPlain(n.c);
  }
  return s;
}

function mdRenderInline(doc, parent, n) {
  for (; n; n = n.next) {
    switch (n.t) {
      case "text":
        if (n.v !== "") mdText(doc, parent, n.v);
        break;
      case "code":
        mdText(doc, mdEl(doc, parent, "code"), n.v);
        break;
      case "br":
        mdEl(doc, parent, "br");
        mdText(doc, parent, "\n");
        break;
      case "soft":
        mdText(doc, parent, "\n");
        break;
      case "em":
      case "strong":
      case "del":
        mdRenderInline(doc, mdEl(doc, parent, n.t), n.c);
        break;
      case "auto":
        mdText(doc, mdEl(doc, parent, "span", "md-link"), n.v);
        break;
      case "link":
        mdRenderInline(doc, mdEl(doc, parent, "span", "md-link"), n.c);
        if (n.dest !== "" && n.dest !== mdPlain(n.c)) mdAddress(doc, parent, n.dest);
        break;
      case "img":
        var alt = mdPlain(n.c);
        if (mdReDataImage.test(n.dest)) {
          var img = mdEl(doc, parent, "img");
          img.setAttribute("src", n.dest);
          img.setAttribute("alt", alt);
          break;
        }
        mdText(doc, mdEl(doc, parent, "span", "md-img"), "[image: " + alt + "]");
        if (n.dest !== "") mdAddress(doc, parent, n.dest);
        break;
    }
  }
}

function mdAddress(doc, parent, dest) {
  mdText(doc, parent, " ");
  mdText(doc, mdEl(doc, parent, "span", "md-url"), "<" + dest + ">");
}

// ---------------------------------------------------------------------------
// Code highlighting: comments, strings, numbers and keywords of the common
// language families, and added / removed lines of diffs. It returns
// [class, text] pairs ("" for plain text).

var mdLangs = null;

function mdWords(s) {
  var m = Object.create(null);
  s.split(" ").forEach(function (w) { if (w) m[w] = true; });
  return m;
}

function mdLangTable() {
  if (mdLangs) return mdLangs;
  var cLike = [["/*", "*/"]];
  mdLangs = {
    go: { line: ["//"], block: cLike, quotes: "\"'`", keywords: mdWords("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota any error string int int64 int32 uint byte rune bool float64 make new len cap append") },
    js: { line: ["//"], block: cLike, quotes: "\"'`", keywords: mdWords("async await break case catch class const continue debugger default delete do else export extends false finally for from function if import in instanceof let new null of return static super switch this throw true try typeof undefined var void while yield interface type enum implements readonly as") },
    python: { line: ["#"], block: [], quotes: "\"'", triple: true, keywords: mdWords("and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield self") },
    shell: { line: ["#"], block: [], quotes: "\"'", keywords: mdWords("if then else elif fi for while until do done case esac in function return export local echo cd exit set unset source") },
    rust: { line: ["//"], block: cLike, quotes: "\"", keywords: mdWords("as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err") },
    c: { line: ["//"], block: cLike, quotes: "\"'", keywords: mdWords("auto break case catch char class const continue default delete do double else enum extern false final float for friend goto if inline int long namespace new null nullptr override private protected public return short signed sizeof static struct switch template this throw true try typedef union unsigned using virtual void volatile while import package boolean extends implements interface var val fun when object") },
    ruby: { line: ["#"], block: [], quotes: "\"'", keywords: mdWords("begin break case class def do else elsif end ensure false for if in module next nil not or redo rescue retry return self super then true undef unless until when while yield require") },
    sql: { line: ["--"], block: cLike, quotes: "'\"", keywords: mdWords("select from where insert into values update set delete create table drop alter index join left right inner outer on group by order having limit offset as and or not null is in like distinct union all primary key references SELECT FROM WHERE INSERT INTO VALUES UPDATE SET DELETE CREATE TABLE DROP ALTER INDEX JOIN LEFT RIGHT INNER OUTER ON GROUP BY ORDER HAVING LIMIT OFFSET AS AND OR NOT NULL IS IN LIKE DISTINCT UNION ALL PRIMARY KEY REFERENCES") },
    yaml: { line: ["#"], block: [], quotes: "\"'", keywords: mdWords("true false null yes no") },
    json: { line: [], block: [], quotes: "\"", keywords: mdWords("true false null") },
    css: { line: [], block: cLike, quotes: "\"'", keywords: mdWords("") },
    html: { line: [], block: [["<!" + "--", "--" + ">"]], quotes: "\"'", keywords: mdWords("") }
  };
  var aliases = {
    golang: "go", javascript: "js", jsx: "js", ts: "js", typescript: "js", tsx: "js", mjs: "js", cjs: "js",
    py: "python", python3: "python", sh: "shell", bash: "shell", zsh: "shell", console: "shell", fish: "shell",
    rs: "rust", cpp: "c", "c++": "c", cc: "c", h: "c", hpp: "c", java: "c", cs: "c", csharp: "c", kotlin: "c",
    kt: "c", swift: "c", scala: "c", rb: "ruby", yml: "yaml", toml: "yaml", ini: "yaml", jsonc: "json",
    json5: "json", xml: "html", svg: "html", scss: "css", less: "css", postgres: "sql", mysql: "sql", sqlite: "sql"
  };
  Object.keys(aliases).forEach(function (a) { mdLangs[a] = mdLangs[aliases[a]]; });
  return mdLangs;
}

function mdIsDigit(c) { return c >= "0" && c <= "9"; }

function mdIsWord(c) {
  return c === "_" || c === "$" || mdIsDigit(c) || (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c.charCodeAt(0) >= 0x80;
}

function mdHighlight(code, language) {
  language = String(language || "").trim().toLowerCase();
  if (language === "diff" || language === "patch") return mdHighlightDiff(code);
  var table = mdLangTable();
  var l = Object.prototype.hasOwnProperty.call(table, language) ? table[language] : null;
  if (!l) return [["", code]];
  var out = [], i = 0, plain = 0, n = code.length;
  function flush() { if (plain < i) out.push(["", code.slice(plain, i)]); }
  function span(cls, end) { flush(); out.push([cls, code.slice(i, end)]); i = end; plain = i; }
  outer:
  while (i < n) {
    var c = code.charAt(i), k, end;
    for (k = 0; k < l.line.length; k++) {
      if (code.startsWith(l.line[k], i)) {
        end = code.indexOf("\n", i);
        span("tok-c", end < 0 ? n : end);
        continue outer;
      }
    }
    for (k = 0; k < l.block.length; k++) {
      if (code.startsWith(l.block[k][0], i)) {
        end = code.indexOf(l.block[k][1], i + l.block[k][0].length);
        span("tok-c", end < 0 ? n : end + l.block[k][1].length);
        continue outer;
      }
    }
    if (l.quotes.indexOf(c) >= 0) {
      span("tok-s", mdStringEnd(code, i, l.triple));
      continue;
    }
    if (mdIsDigit(c) && (i === 0 || !mdIsWord(code.charAt(i - 1)))) {
      end = i + 1;
      while (end < n && (mdIsWord(code.charAt(end)) || code.charAt(end) === ".")) end++;
      span("tok-n", end);
      continue;
    }
    if (mdIsWord(c) && (i === 0 || !mdIsWord(code.charAt(i - 1)))) {
      end = i + 1;
      while (end < n && mdIsWord(code.charAt(end))) end++;
      if (l.keywords[code.slice(i, end)] === true) span("tok-k", end);
      else i = end;
      continue;
    }
    i++;
  }
  flush();
  return out;
}

// mdStringEnd is the index after the string literal starting at i.
function mdStringEnd(code, i, triple) {
  var q = code.charAt(i);
  if (triple && code.startsWith(q + q + q, i)) {
    var end = code.indexOf(q + q + q, i + 3);
    return end < 0 ? code.length : end + 3;
  }
  for (var j = i + 1; j < code.length; j++) {
    var c = code.charAt(j);
    if (c === "\\") j++;
    else if (c === q) return j + 1;
    else if (c === "\n" && q !== "`") return j;
  }
  return code.length;
}

function mdHighlightDiff(code) {
  var out = [], start = 0;
  while (start < code.length) {
    var nl = code.indexOf("\n", start), end = nl < 0 ? code.length : nl + 1;
    var line = code.slice(start, end), cls = "";
    start = end;
    if (line.startsWith("+++") || line.startsWith("---")) cls = "tok-k";
    else if (line.charAt(0) === "+") cls = "tok-add";
    else if (line.charAt(0) === "-") cls = "tok-del";
    else if (line.startsWith("@@")) cls = "tok-c";
    out.push([cls, line]);
  }
  return out;
}
