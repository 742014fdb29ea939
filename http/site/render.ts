import { createHash } from 'node:crypto';
import { esc, mapSvg, placesList, type Land } from '../../web/site/draw.js';
import type { PublicMap } from '../../domain/public/map.js';
import { networkOfMap } from '../../domain/public/network.js';

/**
 * The home page as one HTML document, made when the site starts and again when
 * its snapshot of `/public/map` is renewed, never per request. Everything a
 * visitor needs is in the HTML: figures, the map as inline SVG, the list of
 * locations, how to peer. `/fleet.js` only makes it live.
 */
export interface PageInput {
  /** The baked `/public/map`, or null when the site has never had one. */
  snapshot: PublicMap | null;
  /** The AS name of the snapshot's AS number (registry replica), or null. */
  asName: string | null;
  land: Land | null;
  /** The minified style sheet, inlined (the contract serves no style sheet path). */
  css: string;
  controlUrl: string;
  portalUrl: string | undefined;
}

export interface RenderedPage {
  html: string;
  /** The Content-Security-Policy of this page: its inline style by hash, scripts from itself, data from itself and the control server. */
  csp: string;
}

const formatTime = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
const trimSlash = (url: string) => url.replace(/\/+$/, '');

export function renderPage(input: PageInput): RenderedPage {
  const snap = input.snapshot;
  const network = networkOfMap(snap ?? { nodes: [], links: [] }, 'snapshot');
  const asn = snap?.asn ?? null;
  const title = input.asName ?? (asn !== null ? `AS${asn}` : 'Our dn42 network');
  const eyebrow = asn !== null ? `dn42 · <span data-asn>AS${asn}</span>` : 'dn42';
  const figure = (key: keyof PublicMap['stats']) => (snap ? snap.stats[key].toLocaleString('en') : '–');
  const controlUrl = trimSlash(input.controlUrl);
  const places = network.places.length;
  const portal = input.portalUrl
    ? `<p><a class="cta" href="${esc(input.portalUrl)}">Open the peering portal</a></p>`
    : `<p>Our peering portal is not open yet. Until it is, reach us through the contact of ${asn !== null ? `<strong>AS${asn}</strong>` : 'our AS'} in the dn42 registry.</p>`;
  const lede = places
    ? `We run ${places} point${places === 1 ? '' : 's'} of presence on dn42, the decentralised network of hobbyists, and peer with anyone in its registry.`
    : 'We run points of presence on dn42, the decentralised network of hobbyists, and peer with anyone in its registry.';

  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · dn42 network</title>
<meta name="description" content="${esc(lede)}">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<style>${input.css}</style>
<script type="module" src="/fleet.js"></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="hero">
<div class="inner">
<p class="eyebrow">${eyebrow}</p>
<h1>${esc(title)}</h1>
<p class="lede">${esc(lede)}</p>
<a class="cta" href="#peering">Peer with us</a>
</div>
</header>
<main id="main">
<div id="network" class="inner" data-control="${esc(controlUrl)}" data-layer="snapshot">
<section aria-labelledby="figures-title">
<h2 id="figures-title">Live figures</h2>
<dl class="figures">
<div><dt>Nodes online</dt><dd data-stat="nodes_online">${figure('nodes_online')}</dd></div>
<div><dt>BGP sessions</dt><dd data-stat="bgp_sessions">${figure('bgp_sessions')}</dd></div>
<div><dt>Routes</dt><dd data-stat="routes">${figure('routes')}</dd></div>
</dl>
<p class="asof"${snap ? '' : ' hidden'}>As of <time data-updated datetime="${esc(snap?.updated_at ?? '')}">${snap ? formatTime(snap.updated_at) : ''}</time></p>
</section>
<section aria-labelledby="map-title">
<h2 id="map-title">Where we are</h2>
<fleet-map fleet-src="${esc(controlUrl)}/control/v1/public/fleet" world-src="/world-land.geojson">${mapSvg(network, input.land)}</fleet-map>
<ul id="places" class="places" aria-label="Our points of presence">${placesList(network)}</ul>
</section>
</div>
<div class="inner">
<section id="peering" aria-labelledby="peering-title">
<h2 id="peering-title">Peer with us</h2>
<p>Any network with an AS number in the dn42 registry can peer with us at any of our points of presence, over WireGuard with one multiprotocol BGP session (IPv4 and IPv6 over link-local IPv6).</p>
<ol class="steps">
<li>Sign in with your AS number: you prove it with the SSH or PGP key, or the e-mail address, of its maintainer in the registry.</li>
<li>Pick a point of presence and give us your WireGuard public key and, if you have one, your endpoint.</li>
<li>Your tunnel and BGP session are set up within a minute; the portal shows the details for your side.</li>
</ol>
${portal}
</section>
</div>
</main>
<footer>
<div class="inner">
<p>The figures and the map come from our control server; with JavaScript on, they follow it while this page is open.</p>
<p>Land outline: Natural Earth (public domain). Photo: a canyon at dusk, rendered by this project.</p>
</div>
</footer>
</body>
</html>
`;
  const styleHash = createHash('sha256').update(input.css).digest('base64');
  const controlOrigin = new URL(controlUrl).origin;
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'sha256-${styleHash}'`,
    "img-src 'self'",
    `connect-src 'self' ${controlOrigin}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { html, csp };
}
