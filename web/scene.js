// The 3D replay of a mechanism (three.js, the global THREE of the Debian package libjs-three):
// one object per body from the geometry in the subsystem's report (a shape or a mesh, or the box of the
// body's inertia), placed at each time by the recorded poses (<subsystem>.poses.<body>_x ...
// _e3: centre of mass and Euler parameters), joints marked as small dark spheres on their bodies,
// contacts as red wire spheres of their radius.
import { valueAt } from './csv.js';
import { el } from './tables.js';

// The mechanisms of a run: [{subsystem, geometry, pose columns per body}] for the subsystems
// whose report has a geometry and whose poses were recorded.
export function mechanismsOf(run) {
  const found = [];
  for (const [name, sub] of Object.entries((run.summary && run.summary.subsystems) || {})) {
    const geo = sub.report && sub.report.geometry;
    if (!geo) continue;
    const cols = geo.bodies.map((b) => ['x', 'y', 'z', 'e0', 'e1', 'e2', 'e3']
      .map((c) => run.table.names.indexOf(name + '.poses.' + b.name + '_' + c)));
    found.push({ subsystem: name, geometry: geo, columns: cols, recorded: cols.every((c) => c.every((k) => k >= 0)) });
  }
  return found;
}

// The largest dimension of a body's shape (m).
function extent(b) {
  if (b.shape === 'mesh') {
    const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    b.triangles.forEach((x, i) => { lo[i % 3] = Math.min(lo[i % 3], x); hi[i % 3] = Math.max(hi[i % 3], x); });
    return Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
  }
  return b.shape === 'sphere' ? 2 * b.radius : b.shape === 'cylinder' ? Math.max(2 * b.radius, b.length) : Math.max(...b.size);
}

// A mesh for the body; no dimension under `least` (a point mass stays visible).
function bodyMesh(b, color, least) {
  const T = window.THREE, at = (x) => Math.max(x, least);
  let geometry;
  if (b.shape === 'mesh') {
    geometry = new T.BufferGeometry();
    geometry.setAttribute('position', new T.BufferAttribute(new Float32Array(b.triangles), 3));
    geometry.computeVertexNormals();
  } else if (b.shape === 'sphere') geometry = new T.SphereBufferGeometry(at(b.radius), 24, 16);
  else if (b.shape === 'cylinder') geometry = new T.CylinderBufferGeometry(at(b.radius), at(b.radius), at(b.length), 24);
  else geometry = new T.BoxBufferGeometry(at(b.size[0]), at(b.size[1]), at(b.size[2]));
  const mesh = new T.Mesh(geometry, new T.MeshStandardMaterial({ color, transparent: true, opacity: 0.85 }));
  const inner = new T.Quaternion(b.rotation[1], b.rotation[2], b.rotation[3], b.rotation[0]);
  if (b.shape === 'cylinder') {  // three's cylinder lies along its y axis
    const axis = new T.Vector3(...b.axis).normalize();
    inner.multiply(new T.Quaternion().setFromUnitVectors(new T.Vector3(0, 1, 0), axis));
  }
  mesh.quaternion.copy(inner);
  mesh.position.set(...b.offset);
  return mesh;
}

// A replay of one mechanism in `parent`; setTime(t) places the bodies at the poses of time t.
export class Replay {
  constructor(parent, run, mech) {
    const T = window.THREE;
    this.run = run;
    this.mech = mech;
    this.root = el('div', { class: 'replay' });
    parent.append(el('h3', {}, run.label + ': ' + mech.subsystem + ' (' + mech.geometry.bodies.length + ' bodies)'), this.root);
    this.scene = new T.Scene();
    this.scene.background = new T.Color(0xf4f4f4);
    this.scene.add(new T.AmbientLight(0xffffff, 0.55));
    const sun = new T.DirectionalLight(0xffffff, 0.7);
    sun.position.set(3, 10, 6);
    this.scene.add(sun);
    this.size = Math.max(...mech.geometry.bodies.map(extent));
    this.bodies = mech.geometry.bodies.map((b, k) => {
      const g = new T.Group();
      g.name = b.name;
      g.add(bodyMesh(b, new T.Color().setHSL((k * 0.17) % 1, 0.55, 0.5), 0.02 * this.size));
      this.scene.add(g);
      return g;
    });
    this.jointMarks(mech.geometry.joints || []);
    this.contacts = this.contactMarks(mech.geometry.contacts || []);
    this.renderer = new T.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    this.renderer.setSize(parent.clientWidth || 800, 420);
    this.root.append(this.renderer.domElement);
    this.camera = new T.PerspectiveCamera(40, (parent.clientWidth || 800) / 420, 0.01, 1000);
    this.orbit = { yaw: 0.6, pitch: 0.35, distance: 1 };
    this.listen();
  }
  jointMarks(joints) {
    const T = window.THREE;
    const names = this.mech.geometry.bodies.map((b) => b.name);
    for (const j of joints) {
      const mark = new T.Mesh(new T.SphereBufferGeometry(0.015 * this.size, 12, 8),
        new T.MeshBasicMaterial({ color: 0x222222 }));
      mark.position.set(...j.point);
      const k = names.indexOf(j.body);
      (k >= 0 ? this.bodies[k] : this.scene).add(mark);
    }
  }
  contactMarks(contacts) {
    const T = window.THREE;
    const names = this.mech.geometry.bodies.map((b) => b.name);
    return contacts.map((c) => {
      const mark = new T.Mesh(new T.SphereBufferGeometry(Math.max(c.radius, 0.01 * this.size), 12, 8),
        new T.MeshBasicMaterial({ color: 0xd62728, wireframe: true }));
      mark.name = c.name;
      mark.position.set(...c.point);
      const k = names.indexOf(c.body);
      (k >= 0 ? this.bodies[k] : this.scene).add(mark);
      return mark;
    });
  }
  // Camera on the box every body's centre of mass sweeps over the run, widened by the bodies' size.
  frameAll() {
    const T = window.THREE, tab = this.run.table;
    const box = new T.Box3().setFromObject(this.scene);
    for (const cols of this.mech.columns) {
      const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
      for (let i = 0; i < 3; ++i) {
        for (const v of tab.column(cols[i])) if (Number.isFinite(v)) { lo[i] = Math.min(lo[i], v); hi[i] = Math.max(hi[i], v); }
      }
      if (lo.every(Number.isFinite)) { box.expandByPoint(new T.Vector3(...lo)); box.expandByPoint(new T.Vector3(...hi)); }
    }
    this.target = box.getCenter(new T.Vector3());
    this.orbit.distance = Math.max(box.getSize(new T.Vector3()).length(), 0.1) * 1.3;
    this.placeCamera();
  }
  placeCamera() {
    const o = this.orbit, c = this.target;
    this.camera.position.set(c.x + o.distance * Math.cos(o.pitch) * Math.sin(o.yaw), c.y + o.distance * Math.sin(o.pitch),
      c.z + o.distance * Math.cos(o.pitch) * Math.cos(o.yaw));
    this.camera.lookAt(c);
    this.renderer.render(this.scene, this.camera);
  }
  listen() {
    const canvas = this.renderer.domElement;
    let from = null;
    canvas.addEventListener('mousedown', (e) => { from = [e.clientX, e.clientY]; });
    window.addEventListener('mouseup', () => { from = null; });
    canvas.addEventListener('mousemove', (e) => {
      if (!from) return;
      this.orbit.yaw -= (e.clientX - from[0]) * 0.01;
      this.orbit.pitch = Math.max(-1.5, Math.min(1.5, this.orbit.pitch + (e.clientY - from[1]) * 0.01));
      from = [e.clientX, e.clientY];
      this.placeCamera();
    });
    canvas.addEventListener('wheel', (e) => {
      e.preventDefault();
      this.orbit.distance *= e.deltaY > 0 ? 1.1 : 0.9;
      this.placeCamera();
    }, { passive: false });
  }
  setTime(t) {
    const tab = this.run.table, time = tab.time;
    this.mech.columns.forEach((cols, k) => {
      const v = cols.map((c) => valueAt(time, tab.column(c), t));
      const q = new window.THREE.Quaternion(v[4], v[5], v[6], v[3]).normalize();
      this.bodies[k].position.set(v[0], v[1], v[2]);
      this.bodies[k].quaternion.copy(q);
    });
    if (!this.target) this.frameAll();
    this.renderer.render(this.scene, this.camera);
  }
  positions() {
    return this.bodies.map((g) => ({ name: g.name, position: [g.position.x, g.position.y, g.position.z],
      triangles: g.children[0].geometry.index ? g.children[0].geometry.index.count / 3
        : g.children[0].geometry.attributes.position.count / 3 }));
  }
  // Where the contact marks stand now (world coordinates).
  contactPositions() {
    return this.contacts.map((m) => {
      const p = m.getWorldPosition(new window.THREE.Vector3());
      return { name: m.name, position: [p.x, p.y, p.z] };
    });
  }
}
