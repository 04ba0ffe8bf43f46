// karakuri's page program: the replay of a run (kind "replay") or a URDF model (kind "model").
// Data: the JSON of #karakuri-data (written by crates/karakuri-cli/src/viewer/). Binary arrays
// are base64 little-endian (float32, int16, uint32). World axes are z-up, metres.
// Test hooks: #karakuri-status carries the time, slider, plot cursor, drawn pixels and the
// screen positions of the moving bodies after each render that follows a seek.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

const scriptStart = performance.now();
const D = JSON.parse(document.getElementById('karakuri-data').textContent);
const statusEl = document.getElementById('karakuri-status');

// ---------------------------------------------------------------------------------- decoding
// long arrays are deflated (`z:` + base64 of zlib data): inflated once, up front
async function inflateAll(node) {
  const jobs = [];
  const text = new Set(['name', 'title', 'summary', 'label', 'notes', 'scene', 'type', 'layer', 'kind', 'unit']);
  (function walk(o) {
    for (const [k, v] of Object.entries(o)) {
      if (typeof v === 'string' && v.startsWith('z:') && !text.has(k)) {
        const stream = new Blob([bytes(v.slice(2))]).stream().pipeThrough(new DecompressionStream('deflate'));
        jobs.push(new Response(stream).arrayBuffer().then((b) => { o[k] = b; }));
      } else if (v && typeof v === 'object') {
        walk(v);
      }
    }
  })(node);
  await Promise.all(jobs);
}
function bytes(s) {
  if (s instanceof ArrayBuffer) return s;
  const bin = atob(s);
  const u = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
  return u.buffer;
}
const f32 = (s) => new Float32Array(bytes(s));
const i16 = (s) => new Int16Array(bytes(s));
const u32 = (s) => new Uint32Array(bytes(s));
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

await inflateAll(D);
const inflatedMs = performance.now() - scriptStart;

// ---------------------------------------------------------------------------------- page frame
THREE.Object3D.DEFAULT_UP.set(0, 0, 1);
const head = el('header', 'kk-head');
head.append(el('h1', null, D.title), el('span', 'kk-sub', (D.summary || '').split('\n')[0]),
  el('span', 'kk-brand', 'karakuri'));
const main = el('main', 'kk-main' + (D.kind === 'model' ? ' kk-model' : ''));
const view = el('div', 'kk-view');
main.append(view);
document.body.append(head, main);

const renderer = new THREE.WebGLRenderer({ antialias: true });
renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
renderer.shadowMap.enabled = true;
renderer.shadowMap.type = THREE.PCFSoftShadowMap;
view.append(renderer.domElement);
const scene = new THREE.Scene();
const background = new THREE.Color(0xe9edf2);
scene.background = background;
const camera = new THREE.PerspectiveCamera(40, 1, 0.01, 1000);
const controls = new OrbitControls(camera, renderer.domElement);
controls.enableDamping = false;
const hint = el('div', 'kk-hint', 'drag: orbit · right-drag: pan · wheel: zoom');
view.append(hint);
const panel = el('div', 'kk-panel');
view.append(panel);

// `#show=frames,trails` / `#hide=contacts` in the address override a toggle's default
const fragment = (key) => ((new RegExp('[#&]' + key + '=([^&]*)').exec(location.hash) || [])[1] || '').split(',');
function toggle(label, initial, onChange, key) {
  const l = el('label');
  const c = el('input');
  c.type = 'checkbox';
  c.checked = (initial || fragment('show').includes(key)) && !fragment('hide').includes(key);
  c.addEventListener('change', () => { onChange(c.checked); requestRender(true); });
  if (c.checked !== false) onChange(c.checked);
  l.append(c, document.createTextNode(label));
  panel.append(l);
  return c;
}

// ---------------------------------------------------------------------------------- shapes
const meshGeometries = (D.meshes || []).map((m) => {
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(f32(m.v), 3));
  g.setIndex(new THREE.BufferAttribute(u32(m.i), 1));
  g.computeVertexNormals();
  g.computeBoundingSphere();
  return g;
});
const materials = new Map();
function material(color, layer, flat) {
  const key = color.join(',') + layer + (flat ? 'f' : '');
  if (!materials.has(key)) {
    const c = new THREE.Color().setRGB(color[0], color[1], color[2], THREE.SRGBColorSpace);
    const m = layer === 'collision'
      ? new THREE.MeshBasicMaterial({ color: 0x2fa84f, wireframe: true, transparent: true, opacity: 0.55 })
      : new THREE.MeshStandardMaterial({ color: c, roughness: 0.55, metalness: 0.08, flatShading: !!flat,
          transparent: color[3] < 1, opacity: color[3] });
    materials.set(key, m);
  }
  return materials.get(key);
}
function setPose(obj, p) {
  obj.position.set(p[0], p[1], p[2]);
  obj.quaternion.set(p[3], p[4], p[5], p[6]);
}
const planes = [];
const zAxisToY = new THREE.Quaternion().setFromAxisAngle(new THREE.Vector3(1, 0, 0), Math.PI / 2);
function shapeObject(s) {
  let g = null;
  let flat = false;
  switch (s.type) {
    case 'sphere': g = new THREE.SphereGeometry(s.r, 32, 16); break;
    case 'box': g = new THREE.BoxGeometry(2 * s.half[0], 2 * s.half[1], 2 * s.half[2]); break;
    case 'capsule': g = new THREE.CapsuleGeometry(s.r, 2 * s.hl, 8, 24).applyQuaternion(zAxisToY); break;
    case 'cylinder': g = new THREE.CylinderGeometry(s.r, s.r, 2 * s.hl, 32).applyQuaternion(zAxisToY); break;
    case 'mesh': g = meshGeometries[s.mesh]; flat = true; break;
    case 'plane': {
      const o = new THREE.Group();
      setPose(o, s.pose);
      planes.push(o);
      return o; // sized once the scene's extent is known
    }
    default: return null;
  }
  const m = new THREE.Mesh(g, material(s.color, s.layer, flat));
  m.castShadow = s.layer !== 'collision';
  m.receiveShadow = s.layer !== 'collision';
  setPose(m, s.pose);
  return m;
}
// bodyObjects[i]: the group moved by body i; its children: visual shapes, a collision group,
// an axes helper
const bodyObjects = [];
const collisionGroups = [];
const axesHelpers = [];
function buildBody(b) {
  const g = new THREE.Group();
  g.name = b.name;
  const col = new THREE.Group();
  col.visible = false;
  for (const s of b.shapes || []) {
    const o = shapeObject(s);
    if (!o) continue;
    (s.layer === 'collision' ? col : g).add(o);
  }
  g.add(col);
  collisionGroups.push(col);
  scene.add(g);
  bodyObjects.push(g);
  return g;
}

// ---------------------------------------------------------------------------------- lights, floor
function light(extent) {
  const { center, radius } = extent;
  scene.add(new THREE.HemisphereLight(0xf4f7ff, 0x8a8478, 1.6));
  const sun = new THREE.DirectionalLight(0xffffff, 2.2);
  sun.position.set(center.x + 0.6 * radius, center.y - 0.9 * radius, center.z + 2.0 * radius);
  sun.target.position.copy(center);
  sun.castShadow = true;
  sun.shadow.mapSize.set(2048, 2048);
  const r = 1.6 * radius;
  Object.assign(sun.shadow.camera, { left: -r, right: r, top: r, bottom: -r, near: 0.01, far: 8 * radius });
  sun.shadow.bias = -0.0005;
  scene.add(sun, sun.target);
  const size = Math.max(4, Math.ceil(6 * radius));
  const divisions = Math.round(size / (size > 40 ? 2 : size > 12 ? 1 : 0.25));
  const floorMaterial = new THREE.MeshStandardMaterial({ color: 0xd9dde3, roughness: 0.95 });
  const gridFor = () => {
    const grid = new THREE.GridHelper(size, divisions, 0x9aa3ae, 0xbec5ce);
    grid.quaternion.copy(zAxisToY);
    grid.position.z = 0.0015 * Math.max(1, radius);
    return grid;
  };
  if (planes.length === 0) {
    const grid = gridFor();
    grid.position.z = extent.min.z;
    scene.add(grid);
  }
  for (const p of planes) {
    const floor = new THREE.Mesh(new THREE.PlaneGeometry(size, size), floorMaterial);
    floor.receiveShadow = true;
    // centre the square under the scene (along the plane)
    const local = p.worldToLocal(center.clone());
    floor.position.set(local.x, local.y, 0);
    const grid = gridFor();
    grid.position.x = local.x;
    grid.position.y = local.y;
    p.add(floor, grid);
  }
}

function frameCamera(extent, distance) {
  const { center } = extent;
  const radius = extent.radius * distance;
  camera.near = radius / 200;
  camera.far = radius * 200;
  camera.position.set(center.x + 1.2 * radius, center.y - 1.9 * radius, center.z + 0.95 * radius);
  controls.target.copy(center);
  camera.updateProjectionMatrix();
  controls.update();
}

// ---------------------------------------------------------------------------------- rendering
let needsRender = true;
let probeAfterRender = false;
function requestRender(probe) {
  needsRender = true;
  if (probe) probeAfterRender = true;
}
function resize() {
  const w = view.clientWidth;
  const h = view.clientHeight;
  renderer.setSize(w, h, false);
  camera.aspect = w / Math.max(1, h);
  camera.updateProjectionMatrix();
  requestRender(true);
}
window.addEventListener('resize', resize);
controls.addEventListener('change', () => requestRender(false));

// What the tests read: share of pixels unlike the background, distinct colours, a pixel hash,
// and where the moving bodies are on screen.
function probe(extra) {
  const gl = renderer.getContext();
  const w = gl.drawingBufferWidth;
  const h = gl.drawingBufferHeight;
  const px = new Uint8Array(w * h * 4);
  gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
  const bg = background.clone().convertLinearToSRGB();
  const [br, bgc, bb] = [bg.r * 255, bg.g * 255, bg.b * 255];
  let differ = 0;
  let hash = 2166136261;
  const colours = new Set();
  for (let i = 0; i < px.length; i += 4) {
    if (Math.abs(px[i] - br) + Math.abs(px[i + 1] - bgc) + Math.abs(px[i + 2] - bb) > 12) differ++;
    colours.add((px[i] >> 4) << 8 | (px[i + 1] >> 4) << 4 | (px[i + 2] >> 4));
    hash = Math.imul(hash ^ (px[i] ^ (px[i + 1] << 8) ^ (px[i + 2] << 16)), 16777619) >>> 0;
  }
  Object.assign(statusEl.dataset, {
    width: String(w), height: String(h), drawn: (differ / (w * h)).toFixed(4),
    colours: String(colours.size), hash: String(hash), ...extra,
  });
}

// ---------------------------------------------------------------------------------- replay
function replay() {
  for (const b of D.bodies) buildBody(b);
  D.bodies.forEach((b, i) => setPose(bodyObjects[i], b.pose));
  const F = D.frames;
  const n = F.n;
  const times = f32(F.t);
  const P = i16(F.p);
  const Q = i16(F.q);
  const moving = F.bodies;
  const m = moving.length;
  const tEnd = n > 0 ? times[n - 1] : 0;
  const position = (f, b, out) => {
    const k = (f * m + b) * 3;
    return out.set(F.lo[3 * b] + (P[k] + 32767) * F.step[3 * b],
      F.lo[3 * b + 1] + (P[k + 1] + 32767) * F.step[3 * b + 1],
      F.lo[3 * b + 2] + (P[k + 2] + 32767) * F.step[3 * b + 2]);
  };
  const orientation = (f, b, out) => {
    const k = (f * m + b) * 4;
    return out.set(Q[k], Q[k + 1], Q[k + 2], Q[k + 3]).normalize();
  };

  // scene extent: every body's range of motion and the static bodies
  const box = new THREE.Box3();
  for (let b = 0; b < m; b++) {
    box.expandByPoint(new THREE.Vector3(F.lo[3 * b], F.lo[3 * b + 1], F.lo[3 * b + 2]));
    box.expandByPoint(new THREE.Vector3(F.lo[3 * b] + 65534 * F.step[3 * b],
      F.lo[3 * b + 1] + 65534 * F.step[3 * b + 1], F.lo[3 * b + 2] + 65534 * F.step[3 * b + 2]));
  }
  // and the bodies' shapes at the first and the last frame
  const addShapes = () => D.bodies.forEach((b, i) => {
    const s = new THREE.Box3().setFromObject(bodyObjects[i]);
    if (!s.isEmpty() && s.getSize(new THREE.Vector3()).length() < 1e3) box.union(s);
  });
  const v = new THREE.Vector3();
  const qv = new THREE.Quaternion();
  for (const f of n > 0 ? [0, n - 1] : []) {
    moving.forEach((bi, b) => {
      position(f, b, v);
      orientation(f, b, qv);
      bodyObjects[bi].position.copy(v);
      bodyObjects[bi].quaternion.copy(qv);
    });
    scene.updateMatrixWorld(true);
    addShapes();
  }
  if (n === 0) addShapes();
  if (box.isEmpty()) box.set(new THREE.Vector3(-1, -1, 0), new THREE.Vector3(1, 1, 1));
  const center = box.getCenter(new THREE.Vector3());
  const radius = Math.max(0.5, 0.5 * box.getSize(new THREE.Vector3()).length());
  const extent = { center, radius, min: box.min };
  light(extent);
  frameCamera(extent, 1);
  moving.forEach((bi) => {
    const a = new THREE.AxesHelper(Math.max(0.06, 0.12 * radius / Math.sqrt(Math.max(1, m / 4))));
    a.visible = false;
    bodyObjects[bi].add(a);
    axesHelpers.push(a);
  });

  // contacts: points and force arrows of the stored frame nearest in time
  const C = D.contacts;
  const cStart = u32(C.start);
  const cP = f32(C.p);
  const cF = f32(C.f);
  let maxPerFrame = 0;
  for (let k = 0; k + 1 < cStart.length; k++) maxPerFrame = Math.max(maxPerFrame, cStart[k + 1] - cStart[k]);
  const mags = [];
  for (let i = 0; i < cF.length; i += 3) {
    const f = Math.hypot(cF[i], cF[i + 1], cF[i + 2]);
    if (f > 1e-9) mags.push(f);
  }
  mags.sort((a, b) => a - b);
  const typical = mags.length ? mags[Math.floor(0.95 * (mags.length - 1))] : 1;
  let forceScale = 0.25 * radius / Math.max(typical, 1e-9); // metres per newton
  const cap = Math.max(1, maxPerFrame);
  const pointGeometry = new THREE.BufferGeometry();
  pointGeometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3 * cap), 3));
  const points = new THREE.Points(pointGeometry,
    new THREE.PointsMaterial({ color: 0xd62828, size: 7, sizeAttenuation: false, depthTest: false }));
  points.renderOrder = 2;
  const arrowGeometry = new THREE.BufferGeometry();
  arrowGeometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(6 * cap), 3));
  const arrows = new THREE.LineSegments(arrowGeometry, new THREE.LineBasicMaterial({ color: 0xd62828, depthTest: false }));
  arrows.renderOrder = 2;
  const headGeometry = new THREE.ConeGeometry(1, 2.5, 12).translate(0, -1.25, 0);
  const heads = new THREE.InstancedMesh(headGeometry, new THREE.MeshBasicMaterial({ color: 0xd62828, depthTest: false }), cap);
  heads.renderOrder = 2;
  // a few contacts show through the bodies; a pile's hundreds only where they are in sight
  const xray = maxPerFrame <= 40;
  for (const o of [points, arrows, heads]) o.material.depthTest = !xray;
  const contactGroup = new THREE.Group();
  contactGroup.add(points, arrows, heads);
  for (const o of [points, arrows, heads]) o.frustumCulled = false;
  scene.add(contactGroup);
  const headSize = 0.012 * radius;
  const tmpM = new THREE.Matrix4();
  const tmpQ = new THREE.Quaternion();
  const up = new THREE.Vector3(0, 1, 0);
  const dir = new THREE.Vector3();
  function showContacts(f) {
    const k = Math.min(cStart.length - 2, Math.round(f / C.every));
    const a = k >= 0 ? cStart[k] : 0;
    const b = k >= 0 ? cStart[k + 1] : 0;
    const pp = pointGeometry.attributes.position.array;
    const ap = arrowGeometry.attributes.position.array;
    let h = 0;
    for (let c = a; c < b; c++) {
      const i = 3 * (c - a);
      const [x, y, z] = [cP[3 * c], cP[3 * c + 1], cP[3 * c + 2]];
      pp[i] = x; pp[i + 1] = y; pp[i + 2] = z;
      const [fx, fy, fz] = [cF[3 * c] * forceScale, cF[3 * c + 1] * forceScale, cF[3 * c + 2] * forceScale];
      ap.set([x, y, z, x + fx, y + fy, z + fz], 2 * i);
      const len = Math.hypot(fx, fy, fz);
      if (len > 2 * headSize) {
        dir.set(fx, fy, fz).divideScalar(len);
        tmpQ.setFromUnitVectors(up, dir);
        tmpM.compose(new THREE.Vector3(x + fx, y + fy, z + fz), tmpQ, new THREE.Vector3(headSize, headSize, headSize));
        heads.setMatrixAt(h++, tmpM);
      }
    }
    pointGeometry.setDrawRange(0, b - a);
    arrowGeometry.setDrawRange(0, 2 * (b - a));
    pointGeometry.attributes.position.needsUpdate = true;
    arrowGeometry.attributes.position.needsUpdate = true;
    heads.count = h;
    heads.instanceMatrix.needsUpdate = true;
  }

  // trails: built when first shown
  let trails = null;
  function buildTrails() {
    trails = moving.map((bi, b) => {
      const arr = new Float32Array(3 * n);
      const v = new THREE.Vector3();
      for (let f = 0; f < n; f++) position(f, b, v).toArray(arr, 3 * f);
      const g = new THREE.BufferGeometry();
      g.setAttribute('position', new THREE.BufferAttribute(arr, 3));
      const c = (D.bodies[bi].shapes.find((s) => s.layer === 'visual') || { color: [0.3, 0.3, 0.3] }).color;
      const line = new THREE.Line(g, new THREE.LineBasicMaterial({
        color: new THREE.Color().setRGB(c[0] * 0.8, c[1] * 0.8, c[2] * 0.8, THREE.SRGBColorSpace) }));
      line.frustumCulled = false;
      scene.add(line);
      return line;
    });
  }

  // panel
  let started = false;
  toggle('contacts and forces', true, (on) => { contactGroup.visible = on; }, 'contacts');
  toggle('body frames', false, (on) => axesHelpers.forEach((a) => { a.visible = on; }), 'frames');
  toggle('trails', false, (on) => {
    if (on && !trails) buildTrails();
    if (trails) trails.forEach((t) => { t.visible = on; });
    if (started) update();
  }, 'trails');
  toggle('collision shapes', false, (on) => collisionGroups.forEach((g) => { g.visible = on; }), 'collision');
  const forceRow = el('div', 'kk-row', 'force scale');
  const forceInput = el('input');
  Object.assign(forceInput, { type: 'range', min: '-2', max: '2', step: '0.1', value: '0' });
  forceInput.style.width = '100%';
  const forceBase = forceScale;
  forceInput.addEventListener('input', () => { forceScale = forceBase * Math.pow(10, +forceInput.value); update(); });
  panel.append(forceRow, forceInput);
  const followRow = el('div', 'kk-row', 'camera');
  const follow = el('select');
  follow.append(new Option('free (orbit)', '-1'));
  // robot links by robot, then free bodies: only the first link of each robot is offered
  const seen = new Set();
  moving.forEach((bi, b) => {
    const name = D.bodies[bi].name;
    const robot = name.includes('/') ? name.split('/')[0] : null;
    if (robot && seen.has(robot)) return;
    if (robot) seen.add(robot);
    follow.append(new Option('follow ' + (robot ? robot + ' (' + name.split('/')[1] + ')' : name), String(b)));
  });
  panel.append(followRow, follow);
  let followed = -1;
  const followLast = new THREE.Vector3();
  follow.addEventListener('change', () => {
    followed = +follow.value;
    if (followed >= 0) position(frameAt(t).f, followed, followLast);
    update();
  });

  // transport
  const transport = el('div', 'kk-transport');
  const play = el('button', null, '▶');
  play.title = 'play / pause (space)';
  const slider = el('input');
  Object.assign(slider, { type: 'range', min: '0', max: String(tEnd), step: 'any', value: '0' });
  slider.setAttribute('aria-label', 'time');
  const timeLabel = el('span', 'kk-time');
  const speed = el('select');
  for (const s of [0.25, 0.5, 1, 2, 4]) speed.append(new Option(s + '×', String(s), s === 1, s === 1));
  speed.title = 'playback speed';
  transport.append(play, slider, timeLabel, speed);
  main.append(transport);

  // plots
  const plotsDiv = el('div', 'kk-plots');
  main.append(plotsDiv);
  const xs = Array.from(times);
  const colours = ['#2f6fd6', '#d6542f', '#2fa84f', '#9b4fd6', '#d6a92f', '#2fb5b5', '#d62f8e', '#6b7584'];
  const plots = [];
  for (const p of D.plots || []) {
    const box = el('div', 'kk-plot');
    box.append(el('h2', null, p.title));
    plotsDiv.append(box);
    const data = [xs, ...p.series.map((s) => Array.from(f32(s.v)))];
    const opts = {
      width: Math.max(300, box.clientWidth - 16), height: 170,
      scales: { x: { time: false } },
      axes: [{ label: 'time (s)', labelSize: 18, size: 36 }, { size: 56 }],
      series: [{ label: 't (s)', value: (u, v) => (v == null ? '—' : v.toFixed(3)) },
        ...p.series.map((s, k) => ({ label: s.label, stroke: colours[k % colours.length], width: 1.5,
          value: (u, v) => (v == null ? '—' : Number.isInteger(v) ? String(v) : Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(3) : v.toFixed(4)) }))],
      cursor: { y: false },
      legend: { live: true },
    };
    const u = new uPlot(opts, data, box);
    u.over.addEventListener('click', () => {
      const v = u.posToVal(u.cursor.left, 'x');
      if (Number.isFinite(v)) seek(v, true);
    });
    u.over.addEventListener('mouseleave', () => setTimeout(() => placeCursors(), 0));
    plots.push(u);
  }
  // resized outside the observer's callback (resizing inside it loops)
  let resizeQueued = false;
  new ResizeObserver(() => {
    if (resizeQueued) return;
    resizeQueued = true;
    requestAnimationFrame(() => {
      resizeQueued = false;
      for (const u of plots) {
        const w = Math.max(300, u.root.parentElement.clientWidth - 16);
        if (Math.abs(u.width - w) > 1) u.setSize({ width: w, height: 170 });
      }
      // uPlot lays a resized plot out in a microtask of its own and then moves the cursor line
      // with the old pixels: place the cursors after it, or #t= shows them at another time
      queueMicrotask(placeCursors);
    });
  }).observe(plotsDiv);
  function placeCursors() {
    for (const u of plots) {
      if (u.over.matches(':hover')) continue;
      u.setCursor({ left: u.valToPos(t, 'x'), top: 10 });
    }
  }

  const info = el('details', 'kk-info');
  info.append(el('summary', null, 'Run summary' + ((D.notes || []).length ? ' and notes' : '')),
    el('pre', null, (D.summary || '') + ((D.notes || []).length ? '\n\nnotes:\n' + D.notes.join('\n') : '') +
      '\n\nframes: ' + n + ' (every ' + D.stride + ' steps of ' + D.dt + ' s); contacts shown every ' + C.every + ' frame(s)'));
  main.append(info);

  // time
  let t = 0;
  started = true;
  let playing = false;
  function frameAt(time) {
    let lo = 0;
    let hi = n - 1;
    if (n === 0) return { f: 0, g: 0, a: 0 };
    if (time <= times[0]) return { f: 0, g: 0, a: 0 };
    if (time >= times[hi]) return { f: hi, g: hi, a: 0 };
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (times[mid] <= time) lo = mid; else hi = mid;
    }
    return { f: lo, g: hi, a: (time - times[lo]) / (times[hi] - times[lo]) };
  }
  const pa = new THREE.Vector3();
  const pb = new THREE.Vector3();
  const qa = new THREE.Quaternion();
  const qb = new THREE.Quaternion();
  function update() {
    const { f, g, a } = frameAt(t);
    for (let b = 0; b < m; b++) {
      const o = bodyObjects[moving[b]];
      position(f, b, pa);
      position(g, b, pb);
      o.position.lerpVectors(pa, pb, a);
      orientation(f, b, qa);
      orientation(g, b, qb);
      o.quaternion.slerpQuaternions(qa, qb, a);
    }
    const nearest = a < 0.5 ? f : g;
    showContacts(nearest);
    if (trails) trails.forEach((line) => line.geometry.setDrawRange(0, nearest + 1));
    if (followed >= 0) {
      const now = bodyObjects[moving[followed]].position;
      const d = now.clone().sub(followLast);
      camera.position.add(d);
      controls.target.add(d);
      followLast.copy(now);
      controls.update();
    }
    slider.value = String(t);
    timeLabel.textContent = 't = ' + t.toFixed(3) + ' s / ' + tEnd.toFixed(3) + ' s';
    placeCursors();
    requestRender(false);
  }
  function seek(time, share) {
    t = Math.min(tEnd, Math.max(0, Number.isFinite(time) ? time : 0));
    update();
    requestRender(true);
    if (share) history.replaceState(null, '', location.hash.match(/[#&]t=/)
      ? location.hash.replace(/([#&]t=)[-+0-9.eE]+/, '$1' + t.toFixed(3)) : (location.hash ? location.hash + '&' : '#') + 't=' + t.toFixed(3));
  }
  function setPlaying(on) {
    if (on && t >= tEnd) t = 0;
    playing = on;
    play.textContent = on ? '❚❚' : '▶';
    if (!on) seek(t, true);
  }
  play.addEventListener('click', () => setPlaying(!playing));
  slider.addEventListener('input', () => { setPlaying(false); seek(+slider.value, true); });
  window.addEventListener('keydown', (e) => {
    if (e.code === 'Space' && e.target.tagName !== 'INPUT' && e.target.tagName !== 'SELECT') {
      e.preventDefault();
      setPlaying(!playing);
    }
  });
  const fromHash = () => {
    const m = /[#&]t=([-+0-9.eE]+)/.exec(location.hash);
    return m ? parseFloat(m[1]) : 0;
  };
  window.addEventListener('hashchange', () => seek(fromHash(), false));

  let last = null;
  function loop(now) {
    if (playing && last !== null) {
      t += ((now - last) / 1000) * +speed.value;
      if (t >= tEnd) { t = tEnd; setPlaying(false); }
      update();
    }
    last = now;
    render();
    requestAnimationFrame(loop);
  }
  statusProbe = () => {
    const v = new THREE.Vector3();
    const screen = moving.map((bi) => {
      bodyObjects[bi].getWorldPosition(v).project(camera);
      return [+v.x.toFixed(4), +v.y.toFixed(4)];
    });
    const cursors = plots.map((u) => u.posToVal(u.cursor.left, 'x'));
    probe({ time: String(t), slider: slider.value, cursors: JSON.stringify(cursors), tend: String(tEnd),
      frame: String(frameAt(t).f), bodies: JSON.stringify(screen), plots: String(plots.length) });
  };
  // uPlot sets its scales in a microtask: start once the plots are ready
  const builtMs = performance.now() - scriptStart;
  setTimeout(() => {
    resize();
    seek(fromHash(), false);
    const renderStart = performance.now();
    render();
    statusEl.dataset.buildms = builtMs.toFixed(0);
    statusEl.dataset.renderms = (performance.now() - renderStart).toFixed(0);
    statusEl.dataset.readyms = performance.now().toFixed(0);
    statusEl.dataset.scriptms = (performance.now() - scriptStart).toFixed(0);
  statusEl.dataset.inflatems = inflatedMs.toFixed(0);
    statusEl.dataset.ready = '1';
    requestAnimationFrame(loop);
  }, 0);
}

// ---------------------------------------------------------------------------------- model
function model() {
  const J = D.joints;
  const q = J.map(() => 0);
  for (const b of D.bodies) {
    const g = buildBody(b);
    g.matrixAutoUpdate = false;
  }
  // link frames and inertia boxes, attached to their joints' bodies
  const frames = [];
  for (const f of D.frames) {
    const a = new THREE.AxesHelper(0.08);
    setPose(a, f.pose);
    a.visible = false;
    bodyObjects[f.joint].add(a);
    frames.push(a);
  }
  const inertiaBoxes = [];
  const inertiaMaterial = new THREE.MeshBasicMaterial({ color: 0xd6542f, transparent: true, opacity: 0.35, depthWrite: false });
  D.bodies.forEach((b, j) => {
    if (!b.inertia) return;
    const h = b.inertia.half.map((x) => Math.max(x, 0.002));
    const box = new THREE.Mesh(new THREE.BoxGeometry(2 * h[0], 2 * h[1], 2 * h[2]), inertiaMaterial);
    setPose(box, b.inertia.pose);
    box.add(new THREE.LineSegments(new THREE.EdgesGeometry(box.geometry), new THREE.LineBasicMaterial({ color: 0xa8401f })));
    box.visible = false;
    bodyObjects[j].add(box);
    inertiaBoxes.push(box);
  });
  const world = J.map(() => new THREE.Matrix4());
  const place = J.map((j) => new THREE.Matrix4().compose(new THREE.Vector3(...j.placement.slice(0, 3)),
    new THREE.Quaternion(...j.placement.slice(3)), new THREE.Vector3(1, 1, 1)));
  const motion = new THREE.Matrix4();
  function kinematics() {
    J.forEach((j, k) => {
      if (k === 0) { world[0].identity(); } else {
        motion.identity();
        if (j.type === 'revolute') motion.makeRotationAxis(new THREE.Vector3(...j.axis), q[k]);
        if (j.type === 'prismatic') motion.makeTranslation(j.axis[0] * q[k], j.axis[1] * q[k], j.axis[2] * q[k]);
        world[k].multiplyMatrices(world[j.parent], place[k]).multiply(motion);
      }
      bodyObjects[k].matrix.copy(world[k]);
      bodyObjects[k].matrixWorldNeedsUpdate = true;
    });
    requestRender(true);
  }
  kinematics();
  const box = new THREE.Box3();
  scene.updateMatrixWorld(true);
  bodyObjects.forEach((o) => box.expandByObject(o));
  if (box.isEmpty()) box.set(new THREE.Vector3(-0.5, -0.5, 0), new THREE.Vector3(0.5, 0.5, 1));
  const center = box.getCenter(new THREE.Vector3());
  const radius = Math.max(0.3, 0.5 * box.getSize(new THREE.Vector3()).length());
  light({ center, radius, min: box.min });
  frameCamera({ center, radius }, 1.15);
  frames.forEach((a) => a.scale.setScalar(Math.max(0.5, radius / 1.5)));

  toggle('link frames', false, (on) => frames.forEach((a) => { a.visible = on; }), 'frames');
  toggle('inertia boxes', false, (on) => inertiaBoxes.forEach((b) => { b.visible = on; }), 'inertia');
  toggle('collision shapes', false, (on) => collisionGroups.forEach((g) => { g.visible = on; }), 'collision');

  const side = el('aside', 'kk-side');
  side.append(el('h2', null, 'Joints'));
  const reset = el('button', null, 'Reset to zero');
  side.append(reset);
  const inputs = [];
  J.forEach((j, k) => {
    if (j.type !== 'revolute' && j.type !== 'prismatic') return;
    const row = el('div', 'kk-joint');
    const label = el('div', 'kk-jname');
    const value = el('span', null, '0');
    label.append(el('span', null, j.name), value);
    const input = el('input');
    const zero = Math.min(j.hi, Math.max(j.lo, 0));
    Object.assign(input, { type: 'range', min: String(j.lo), max: String(j.hi), step: String((j.hi - j.lo) / 1000), value: String(zero) });
    q[k] = zero;
    const show = () => { value.textContent = q[k].toFixed(3) + (j.type === 'revolute' ? ' rad' : ' m'); };
    input.addEventListener('input', () => { q[k] = +input.value; show(); kinematics(); });
    show();
    row.append(label, input);
    side.append(row);
    inputs.push([input, k, zero, show]);
  });
  reset.addEventListener('click', () => {
    for (const [input, k, zero, show] of inputs) { q[k] = zero; input.value = String(zero); show(); }
    kinematics();
  });
  kinematics();
  const info = el('details', 'kk-info');
  info.append(el('summary', null, 'Model' + ((D.notes || []).length ? ' and notes' : '')),
    el('pre', null, D.summary + ((D.notes || []).length ? '\n\nnotes:\n' + D.notes.join('\n') : '')));
  side.append(info);
  main.append(side);
  // what the tests read of the framing: the model's box on screen (share of the view's width
  // and height, normalised device coordinates span 2) and whether world +z points up there
  statusProbe = () => {
    const ndc = [];
    for (let k = 0; k < 8; k++) {
      const c = new THREE.Vector3(k & 1 ? box.max.x : box.min.x, k & 2 ? box.max.y : box.min.y, k & 4 ? box.max.z : box.min.z);
      ndc.push(c.project(camera));
    }
    const span = (a) => (Math.max(...ndc.map((v) => v[a])) - Math.min(...ndc.map((v) => v[a]))) / 2;
    const up = center.clone().add(new THREE.Vector3(0, 0, radius)).project(camera).y - center.clone().project(camera).y;
    probe({ joints: String(inputs.length), extent: JSON.stringify([+span('x').toFixed(3), +span('y').toFixed(3)]), up: String(+up.toFixed(3)) });
  };
  resize();
  render();
  statusEl.dataset.readyms = performance.now().toFixed(0);
  statusEl.dataset.scriptms = (performance.now() - scriptStart).toFixed(0);
  statusEl.dataset.inflatems = inflatedMs.toFixed(0);
  statusEl.dataset.ready = '1';
  requestAnimationFrame(function loop() { render(); requestAnimationFrame(loop); });
}

// ---------------------------------------------------------------------------------- start
let statusProbe = () => probe({});
function render() {
  if (!needsRender) return;
  needsRender = false;
  renderer.render(scene, camera);
  if (probeAfterRender) {
    probeAfterRender = false;
    statusProbe();
  }
}
if (D.kind === 'model') model(); else if (D.kind === 'live') live(); else replay();
