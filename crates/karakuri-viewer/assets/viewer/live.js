// ---------------------------------------------------------------------------------- live
// The live page (kind "live", crates/karakuri-viewer/src/live/): the bodies of #karakuri-data
// moved by the frames of a WebSocket (`ws://HOST/ws`, one JSON frame per message); the page's
// controls are JSON commands sent back (pause, play, step, reset, realtime, drag, release,
// target). Test hooks: #karakuri-status carries live="1", the shown time, steps, paused, the
// WebSocket's state, the moving bodies' positions and screen points, and the joint positions.
// This file is appended to viewer.js in the same module (it uses its helpers).
function live() {
  const L = D.live;
  main.classList.add('kk-live');
  statusEl.dataset.live = '1';
  statusEl.dataset.connected = '0';
  for (const b of D.bodies) buildBody(b);
  D.bodies.forEach((b, i) => setPose(bodyObjects[i], b.pose));
  const box = new THREE.Box3();
  scene.updateMatrixWorld(true);
  L.moving.forEach((i) => box.expandByObject(bodyObjects[i]));
  if (box.isEmpty()) bodyObjects.forEach((o) => box.expandByObject(o));
  if (box.isEmpty()) box.set(new THREE.Vector3(-0.5, -0.5, 0), new THREE.Vector3(0.5, 0.5, 1));
  const center = box.getCenter(new THREE.Vector3());
  const radius = Math.max(0.3, 0.5 * box.getSize(new THREE.Vector3()).length());
  light({ center, radius, min: box.min });
  frameCamera({ center, radius }, 1.6);
  hint.textContent = 'drag: orbit · right-drag: pan · wheel: zoom · ctrl+drag a body: pull it with a spring';

  // contacts: points and force lines
  const MAXC = 256;
  const cPoints = new THREE.BufferGeometry();
  cPoints.setAttribute('position', new THREE.BufferAttribute(new Float32Array(MAXC * 3), 3));
  const contactDots = new THREE.Points(cPoints, new THREE.PointsMaterial({ color: 0xd6302f, size: 6, sizeAttenuation: false }));
  const cLines = new THREE.BufferGeometry();
  cLines.setAttribute('position', new THREE.BufferAttribute(new Float32Array(MAXC * 6), 3));
  const contactLines = new THREE.LineSegments(cLines, new THREE.LineBasicMaterial({ color: 0xd6302f }));
  scene.add(contactDots, contactLines);
  let showContacts = true;
  toggle('contacts', true, (on) => { showContacts = on; contactDots.visible = on; contactLines.visible = on; }, 'contacts');
  toggle('collision shapes', false, (on) => collisionGroups.forEach((g) => { g.visible = on; }), 'collision');

  // transport: pause / play, one step, reset, real time, the time
  const bar = el('div', 'kk-transport');
  const play = el('button', null, '❚❚');
  play.id = 'kk-play';
  play.title = 'pause / play (space)';
  const step = el('button', null, '▶|');
  step.id = 'kk-step';
  step.title = 'one step (paused)';
  const reset = el('button', null, '↺');
  reset.id = 'kk-reset';
  reset.title = 'reset to the start';
  const rtLabel = el('label', 'kk-rt');
  const rt = el('input');
  rt.type = 'checkbox';
  rt.id = 'kk-realtime';
  rt.checked = true;
  rtLabel.append(rt, document.createTextNode('real time'));
  const timeEl = el('span', 'kk-time', 't = 0.000 s');
  const conn = el('span', 'kk-conn', 'connecting…');
  bar.append(play, step, reset, rtLabel, conn, timeEl);
  main.after(bar);

  let ws = null;
  const send = (o) => { if (ws && ws.readyState === 1) ws.send(JSON.stringify(o)); };
  let paused = false;
  play.addEventListener('click', () => send({ cmd: paused ? 'play' : 'pause' }));
  step.addEventListener('click', () => send({ cmd: 'step' }));
  reset.addEventListener('click', () => send({ cmd: 'reset' }));
  rt.addEventListener('change', () => send({ cmd: 'realtime', on: rt.checked }));
  window.addEventListener('keydown', (e) => {
    if (e.target instanceof HTMLInputElement) return;
    if (e.code === 'Space') { e.preventDefault(); play.click(); }
  });

  // a slider per actuator
  const side = el('aside', 'kk-side');
  side.append(el('h2', null, 'Actuator targets'));
  if (L.sliders.length === 0) side.append(el('div', 'kk-row', 'no actuators'));
  const sliders = [];
  for (const s of L.sliders) {
    const row = el('div', 'kk-joint');
    const label = el('div', 'kk-jname');
    const value = el('span', null, '');
    label.append(el('span', null, s.name + ' (' + s.mode + ')'), value);
    const input = el('input');
    input.dataset.joint = String(s.joint);
    const start = Math.min(s.hi, Math.max(s.lo, 0));
    Object.assign(input, { type: 'range', min: String(s.lo), max: String(s.hi), step: String((s.hi - s.lo) / 1000), value: String(start) });
    let touched = 0;
    const show = () => { value.textContent = (+input.value).toFixed(3); };
    input.addEventListener('input', () => { touched = performance.now(); show(); send({ cmd: 'target', joint: s.joint, value: +input.value }); });
    show();
    row.append(label, input);
    side.append(row);
    sliders.push({ s, input, show, touched: () => touched });
  }
  main.append(side);

  // live plots: the last PLOT_N frames of energy, contacts, joint positions, sensors
  const PLOT_N = 600;
  const plotsEl = el('div', 'kk-plots');
  bar.after(plotsEl);
  const plots = [];
  function plot(title, labels) {
    const box = el('div', 'kk-plot');
    box.append(el('h2', null, title));
    plotsEl.append(box);
    const series = [{}].concat(labels.map((label, k) => ({ label, stroke: `hsl(${(k * 67) % 360} 60% 45%)`, width: 1.2 })));
    const data = [[]].concat(labels.map(() => []));
    const u = new uPlot({ width: 400, height: 170, scales: { x: { time: false }, y: { range: (u, lo, hi) => (hi - lo > 1e-9 ? [lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo)] : [lo - 1, hi + 1]) } }, series,
      axes: [{ label: 't (s)' }, {}], legend: { live: false } }, data, box);
    const p = { u, data, box };
    plots.push(p);
    return p;
  }
  const energyPlot = plot('Mechanical energy (J)', ['energy']);
  const contactPlot = plot('Contacts', ['contacts']);
  const jointPlot = L.joints.length ? plot('Joint positions (rad / m)', L.joints.slice(0, 24)) : null;
  const sensorPlot = L.sensors.length ? plot('Sensors', L.sensors) : null;
  function push(p, t, values) {
    if (p.data[0].length && t < p.data[0][p.data[0].length - 1]) p.data.forEach((a) => { a.length = 0; });
    p.data[0].push(t);
    for (let k = 1; k < p.data.length; k++) p.data[k].push(values[k - 1] ?? null);
    if (p.data[0].length > PLOT_N) p.data.forEach((a) => a.splice(0, a.length - PLOT_N));
  }
  let plotsDrawn = 0;
  function drawPlots() {
    const w = Math.max(280, plotsEl.clientWidth / Math.min(plots.length, Math.max(1, Math.floor(plotsEl.clientWidth / 380))) - 30);
    for (const p of plots) {
      if (p.u.width !== Math.floor(w)) p.u.setSize({ width: Math.floor(w), height: 170 });
      p.u.setData(p.data);
    }
    plotsDrawn = performance.now();
  }

  // the mouse spring: ctrl (or shift) + drag on a moving body
  const raycaster = new THREE.Raycaster();
  const ndc = new THREE.Vector2();
  const dragPlane = new THREE.Plane();
  const springGeom = new THREE.BufferGeometry();
  springGeom.setAttribute('position', new THREE.BufferAttribute(new Float32Array(6), 3));
  const springLine = new THREE.Line(springGeom, new THREE.LineBasicMaterial({ color: 0x2f6fd6 }));
  springLine.visible = false;
  scene.add(springLine);
  let grab = null;
  const canvas = renderer.domElement;
  function rayAt(e) {
    const r = canvas.getBoundingClientRect();
    ndc.set(((e.clientX - r.left) / r.width) * 2 - 1, -((e.clientY - r.top) / r.height) * 2 + 1);
    raycaster.setFromCamera(ndc, camera);
  }
  function bodyOf(o) {
    for (let x = o; x; x = x.parent) { const i = bodyObjects.indexOf(x); if (i >= 0) return i; }
    return -1;
  }
  canvas.addEventListener('pointerdown', (e) => {
    if (!(e.ctrlKey || e.shiftKey) || e.button !== 0) return;
    rayAt(e);
    const hits = raycaster.intersectObjects(L.moving.map((i) => bodyObjects[i]), true);
    const hit = hits.find((h) => h.object.visible && bodyOf(h.object) >= 0);
    if (!hit) return;
    e.stopImmediatePropagation();
    e.preventDefault();
    const body = bodyOf(hit.object);
    const local = bodyObjects[body].worldToLocal(hit.point.clone());
    dragPlane.setFromNormalAndCoplanarPoint(camera.getWorldDirection(new THREE.Vector3()), hit.point);
    grab = { body, local, target: hit.point.clone() };
    controls.enabled = false;
    send({ cmd: 'drag', body, local: local.toArray(), target: hit.point.toArray() });
  }, { capture: true });
  canvas.addEventListener('pointermove', (e) => {
    if (!grab) return;
    rayAt(e);
    const p = raycaster.ray.intersectPlane(dragPlane, new THREE.Vector3());
    if (!p) return;
    grab.target.copy(p);
    send({ cmd: 'drag', body: grab.body, local: grab.local.toArray(), target: p.toArray() });
  }, { capture: true });
  const letGo = () => {
    if (!grab) return;
    grab = null;
    controls.enabled = true;
    springLine.visible = false;
    send({ cmd: 'release' });
    requestRender(false);
  };
  canvas.addEventListener('pointerup', letGo, { capture: true });
  canvas.addEventListener('pointercancel', letGo, { capture: true });

  // frames
  let last = null;
  function apply(f) {
    last = f;
    L.moving.forEach((i, k) => setPose(bodyObjects[i], f.p.slice(7 * k, 7 * k + 7)));
    const nc = Math.min(MAXC, f.c.length / 6);
    const dp = cPoints.attributes.position.array;
    const dl = cLines.attributes.position.array;
    const scale = 0.3 * radius / Math.max(1e-9, ...Array.from({ length: nc }, (_, k) => Math.hypot(f.c[6 * k + 3], f.c[6 * k + 4], f.c[6 * k + 5])));
    for (let k = 0; k < nc; k++) {
      for (let a = 0; a < 3; a++) {
        dp[3 * k + a] = f.c[6 * k + a];
        dl[6 * k + a] = f.c[6 * k + a];
        dl[6 * k + 3 + a] = f.c[6 * k + a] + scale * f.c[6 * k + 3 + a];
      }
    }
    cPoints.setDrawRange(0, nc);
    cLines.setDrawRange(0, 2 * nc);
    cPoints.attributes.position.needsUpdate = true;
    cLines.attributes.position.needsUpdate = true;
    contactDots.visible = contactLines.visible = showContacts;
    if (grab) {
      const a = springGeom.attributes.position.array;
      bodyObjects[grab.body].localToWorld(grab.local.clone()).toArray(a, 0);
      grab.target.toArray(a, 3);
      springGeom.attributes.position.needsUpdate = true;
      springLine.visible = true;
    }
    paused = f.paused;
    play.textContent = paused ? '▶' : '❚❚';
    rt.checked = f.realtime;
    for (const { s, input, show, touched } of sliders) {
      const tg = f.tg[s.joint];
      if (tg !== null && tg !== undefined && performance.now() - touched() > 1000) { input.value = String(tg); show(); }
    }
    timeEl.textContent = `t = ${f.t.toFixed(3)} s · ${f.rate} steps/s` + (f.note ? ' · ' + f.note : '');
    push(energyPlot, f.t, [f.e]);
    push(contactPlot, f.t, [f.nc]);
    if (jointPlot) push(jointPlot, f.t, f.q);
    if (sensorPlot) push(sensorPlot, f.t, f.s);
    if (performance.now() - plotsDrawn > 200) drawPlots();
    requestRender(false);
    status(f);
  }
  const v = new THREE.Vector3();
  function status(f) {
    const r = canvas.getBoundingClientRect();
    const screen = L.moving.map((i) => {
      bodyObjects[i].getWorldPosition(v).project(camera);
      return [+(r.left + (v.x + 1) / 2 * r.width).toFixed(1), +(r.top + (1 - v.y) / 2 * r.height).toFixed(1)];
    });
    Object.assign(statusEl.dataset, {
      time: f.t.toFixed(6), steps: String(f.steps), paused: f.paused ? '1' : '0', realtime: f.realtime ? '1' : '0',
      pages: String(f.pages), contacts: String(f.nc), note: f.note,
      poses: JSON.stringify(L.moving.map((i, k) => f.p.slice(7 * k, 7 * k + 3))),
      screen: JSON.stringify(screen), joints: JSON.stringify(f.q),
    });
  }
  function connect() {
    ws = new WebSocket(`ws://${location.host}/ws`);
    ws.onopen = () => { statusEl.dataset.connected = '1'; conn.textContent = 'live'; conn.className = 'kk-conn kk-on'; };
    ws.onmessage = (ev) => apply(JSON.parse(ev.data));
    ws.onclose = () => {
      statusEl.dataset.connected = '0';
      conn.textContent = 'disconnected: retrying';
      conn.className = 'kk-conn';
      setTimeout(connect, 1000);
    };
  }
  connect();
  resize();
  render();
  drawPlots();
  statusEl.dataset.ready = '1';
  requestAnimationFrame(function loop() { render(); requestAnimationFrame(loop); });
}
