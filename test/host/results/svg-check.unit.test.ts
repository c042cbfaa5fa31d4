/**
 * @module test/host/results/svg-check.unit.test
 * SVG images where the policy allows them (`images.allowSvg`): an SVG without active content is
 * shown as it came (an editor's output with metadata, namespaces, gradients, internal references,
 * CSS and entities included); one with script, event handlers, javascript:/data: URLs, external
 * references, foreignObject, a DTD, a processing instruction, CSS that loads or runs something, or
 * markup an HTML parser could read otherwise is refused, saying what it found.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extractImages, screenImages } from '../../../host/results/images.js';
import { svgProblem } from '../../../host/results/svg-check.js';
import { image } from '../../helpers/sample-images.js';

const SVG_NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"';
const svg = (body: string, attributes = ''): string => `<svg ${SVG_NS}${attributes} viewBox="0 0 10 10">${body}</svg>`;

const CLEAN: Record<string, string> = {
  'a rectangle': svg('<rect width="10" height="10" fill="red"/>'),
  "an editor's output": `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!-- Created with an editor (http://editor.example/) -->
<svg ${SVG_NS} xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:cc="http://creativecommons.org/ns#" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:ed="http://editor.example/ns" width="10" height="10" xml:space="preserve">
  <metadata><rdf:RDF><cc:Work rdf:about=""><dc:format>image/svg+xml</dc:format><dc:type rdf:resource="http://purl.org/dc/dcmitype/StillImage"/></cc:Work></rdf:RDF></metadata>
  <ed:namedview ed:zoom='2.5' pagecolor="#ffffff"/>
  <defs>
    <linearGradient id="g"><stop offset="0" stop-color="#f00"/><stop offset="1" stop-color="#00f"/></linearGradient>
    <style type="text/css"><![CDATA[ .a { fill: url(#g); stroke: url( '#g' ) } /* a comment */ ]]></style>
    <circle id="dot" r="1"/>
  </defs>
  <rect class="a" width="10" height="10" style="opacity: 0.5; fill: url(&quot;#g&quot;)"/>
  <use xlink:href="#dot" x="5" y="5"/><use href=" #dot" x="2" y="2"/>
  <a href="#dot"><text x="1" y="9">R&amp;D &#x2713; &lt;ok&gt; &#169;</text></a>
</svg>`,
  'an empty style element': svg('<style/><style></style>'),
};

const ACTIVE: [string, string, RegExp][] = [
  ['a script element', svg('<script>alert(1)</script>'), /^a <script> element$/],
  [
    'a namespaced script element',
    `<s:svg xmlns:s="http://www.w3.org/2000/svg"><s:script>alert(1)</s:script></s:svg>`,
    /^a <s:script> element$/,
  ],
  ['a script element in capitals', svg('<SCRIPT>alert(1)</SCRIPT>'), /^a <SCRIPT> element$/],
  [
    'an XHTML script',
    svg('<x:script xmlns:x="http://www.w3.org/1999/xhtml">alert(1)</x:script>'),
    /^a <x:script> element$/,
  ],
  ['an onload attribute', svg('', ' onload="alert(1)"'), /^an event handler attribute \(onload\)$/],
  [
    'an onclick attribute with a prefix',
    svg('<rect x:onclick="alert(1)"/>'),
    /^an event handler attribute \(x:onclick\)$/,
  ],
  [
    'an HTML-style slash before an attribute',
    '<svg/onload="alert(1)"></svg>',
    /^markup that cannot be read as plain XML at character 0/,
  ],
  ['an unquoted attribute', svg('<rect onclick=alert(1) />'), /^markup that cannot be read as plain XML/],
  [
    'a < inside an attribute value',
    svg('<desc title="</desc><img src=x onerror=alert(1)>"/>'),
    /^markup that cannot be read as plain XML/,
  ],
  [
    'a javascript: link',
    svg('<a href="javascript:alert(1)"><text>x</text></a>'),
    /^a javascript:, vbscript: or data: URL in the attribute href$/,
  ],
  [
    'a javascript: link spelt with character references',
    svg('<a xlink:href="&#106;ava&#x09;script:alert(1)"/>'),
    /javascript:, vbscript: or data: URL in the attribute xlink:href/,
  ],
  ['a data: image', svg('<image href="data:image/png;base64,iVBORw0KGgo="/>'), /data: URL in the attribute href/],
  [
    'an external image',
    svg('<image href="https://tracker.example/pixel.png"/>'),
    /^a reference to outside the document \(href="https:\/\/tracker\.example\/pixel\.png"\)$/,
  ],
  [
    'an external use',
    svg('<use xlink:href="other.svg#shape"/>'),
    /reference to outside the document \(xlink:href="other\.svg#shape"\)/,
  ],
  [
    'an xml:base',
    svg('<g xml:base="https://evil.example/"><use href="#a"/></g>'),
    /reference to outside the document \(xml:base=/,
  ],
  [
    'a foreignObject',
    svg('<foreignObject width="10" height="10"><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>'),
    /^a <foreignObject> element$/,
  ],
  ['an iframe', svg('<iframe xmlns="http://www.w3.org/1999/xhtml" src="#x"/>'), /^a <iframe> element$/],
  ['a handler element', svg('<handler type="application/ecmascript">alert(1)</handler>'), /^a <handler> element$/],
  [
    'a DOCTYPE with an entity',
    `<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>${svg('<text>&x;</text>')}`,
    /^a DOCTYPE or entity declaration$/,
  ],
  [
    'a style sheet processing instruction',
    `<?xml-stylesheet href="https://evil.example/x.xsl" type="text/xsl"?>${svg('')}`,
    /^a processing instruction/,
  ],
  [
    'CSS @import',
    svg('<style>@import url(https://evil.example/x.css);</style>'),
    /^CSS that loads or runs something \(@import\) in a <style> element$/,
  ],
  [
    'CSS @import split by a comment',
    svg('<style>@imp<!-- -->ort "https://evil.example/x.css";</style>'),
    /\(@import\) in a <style> element/,
  ],
  [
    'CSS @import split by an element',
    svg('<style>@imp<g/>ort "https://evil.example/x.css";</style>'),
    /\(@import\) in a <style> element/,
  ],
  [
    'a CSS url() to a server',
    svg('<rect style="fill: url(https://evil.example/p)"/>'),
    /^a CSS url\(\) to outside the document in the attribute style$/,
  ],
  [
    'a url() to a server in a presentation attribute',
    svg('<rect fill="url(\'https://evil.example/p#g\')"/>'),
    /CSS url\(\) to outside the document in the attribute fill/,
  ],
  [
    'a CSS escape',
    svg('<style>rect { background: u\\72l(https://evil.example/p) }</style>'),
    /^a CSS escape \(\\\) in a <style> element$/,
  ],
  [
    'CSS expression()',
    svg('<rect style="width: expression(alert(1))"/>'),
    /CSS that loads or runs something \(expression\(\)/,
  ],
  [
    'an animation of a link',
    svg('<a href="#x"><set attributeName="xlink:href" to="https://evil.example/"/></a>'),
    /^an animation of the attribute xlink:href$/,
  ],
  [
    'an animation of an event handler',
    svg('<set attributeName="onmouseover" to="alert(1)"/>'),
    /^an animation of the attribute onmouseover$/,
  ],
  [
    'a comment an HTML parser ends early',
    svg('<!--><script>alert(1)</script>-->'),
    /^a comment holding <, -- or starting with >$/,
  ],
  ['a comment holding --!>', svg('<!-- --!><img src=x onerror=alert(1)> -->'), /^a comment holding/],
  [
    'a CDATA section holding markup',
    svg('<text><![CDATA[</text><script>alert(1)</script>]]></text>'),
    /^a CDATA section holding <$/,
  ],
  ['an HTML entity', svg('<text x="&nbsp;">x</text>'), /^an entity reference in the attribute x$/],
  [
    'another document',
    '<html><body><script>alert(1)</script></body></html>',
    /^not an SVG document: its root element is <html>$/,
  ],
  ['text only', 'just text', /^not an SVG document: it has no root element$/],
];

describe('SVG active content', () => {
  for (const [name, text] of Object.entries(CLEAN))
    it(`finds none in ${name}, which is shown as it came`, () => {
      assert.equal(svgProblem(text), undefined);
      const data = Buffer.from(text).toString('base64');
      const { images } = extractImages(
        screenImages({ drawing: image(data, 'image/svg+xml') }, { allowSvg: true }).value,
        { allowSvg: true },
      );
      assert.deepEqual(images, [{ type: 'image', data, mimeType: 'image/svg+xml' }]);
    });

  for (const [name, text, why] of ACTIVE)
    it(`refuses ${name}`, () => {
      assert.match(String(svgProblem(text)), why);
      const { value, refused } = screenImages(image(Buffer.from(text).toString('base64'), 'image/svg+xml'), {
        allowSvg: true,
      });
      assert.equal(refused.length, 1);
      assert.match(
        (value as { _mcpImage: { error: string } })._mcpImage.error,
        /^Image refused: the SVG holds active content or markup that cannot be checked \(.+\); SVGs with scripts, .* Return it without that, or as image\/png, image\/jpeg, image\/gif or image\/webp\.$/,
      );
    });

  it('refuses an SVG whose bytes are not UTF-8 text', () => {
    const data = Buffer.concat([Buffer.from('<svg>'), Buffer.from([0xff, 0xfe]), Buffer.from('</svg>')]).toString(
      'base64',
    );
    assert.match(
      screenImages(image(data, 'image/svg+xml'), { allowSvg: true }).refused[0]?.why ?? '',
      /not an SVG document: its bytes are not UTF-8 text/,
    );
  });

  it('reads a large SVG in linear time', () => {
    const big = svg(`<g>${'<rect x="1" y="2" width="3" height="4" fill="url(#g)"/><!-- c -->'.repeat(100_000)}</g>`);
    const started = performance.now();
    assert.equal(svgProblem(big), undefined);
    const unterminated = svg(`<!-- ${'x'.repeat(5_000_000)}`);
    assert.match(String(svgProblem(unterminated)), /cannot be read as plain XML/);
    // quadratic on 5 million characters would take hours: the bound leaves a busy machine room
    assert.ok(performance.now() - started < 30_000, `${Math.round(performance.now() - started)} ms`);
  });
});
