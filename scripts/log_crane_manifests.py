#!/usr/bin/env python3
"""Writes the hydraulic log crane of Peiret's nonsmooth interface model abstract (Sect. 4, Fig. 1)
under manifests/log_crane/ (run from the repository root; the JSON files are committed, this
script shows how every number was made):

  log_crane.description.json   the mechanism (plugin `mechanism`): 18 bodies, 22 joints
  log_crane_im.json            nonsmooth interface model co-simulation (Algorithm 2), variable h_M
  log_crane_zoh.json           direct ZOH co-simulation (Algorithm 1), variable h_M
  ../sweeps/log_crane_stability.json   h_M from 1 to 32 ms for both, against a small-step reference

The abstract gives the numbers of bodies and joints (18, 22; spherical, revolute and prismatic),
the 500 kg log, the PD control of the valves from a desired actuator velocity and h_S = 0.2 ms,
and no geometry. Everything else is chosen here and listed below.

Axes: x horizontal from the crane pillar towards the log, y up, z lateral; the ground is y = 0.
The crane moves in the x-y plane; the log lies across it (axis along z), so the jaws' pins are
parallel to the log.

Size. A timber loader crane of 9.3 m reach and 120 kNm gross lifting moment: the published
figures of the Cranab TZ12 (forstpraxis.de, "Cranab baut wieder Lkw-Krane": Bruttohubmoment
120 kNm, Reichweiten 9,3 m und 10,5 m). No drawing of it was available, so the split of the reach
into boom (4.5 m) and jib (4.8 m), the pin positions, masses and cylinder sizes are ours, sized so
that the two cylinders hold the grapple and log at 7.2 m with pressures well inside the pump's.

Bodies (18) and joints (22):
  pillar          fixed to the ground (the crane base on the carrier)                 [fixed]
  column          slews about y on the pillar, held by the slewing gear               [revolute]
  boom            pinned to the column at O_b, 2.4 m high                             [revolute]
  jib             pinned to the boom tip                                              [revolute]
  lift cylinder   barrel on the column (A), rod on the boom (B)       [spherical, prismatic, universal]
  jib cylinder    barrel on the boom (C), rod on a lever of the jib (K) [spherical, prismatic, universal]
  link (2 bodies) the swing link at the jib tip: two crossed pins, swing dampers      [revolute x 2]
  rotator         turns the grapple about y, its motor held                           [revolute]
  jaws (2)        pinned to the rotator's grapple frame                               [revolute x 2]
  grapple cylinder barrel hinged on the frame, rod sliding in it, the rod head kept on the
                  grapple's plane of symmetry                  [revolute, prismatic, point_on_plane]
  sync links (2)  rod head to each jaw's lever                          [spherical + universal x 2]
  log             free body, 500 kg
The cylinders' spherical/universal ends leave no redundant constraint in the planar loops (a
pin at both ends would repeat 3 constraints per loop); the universal's axes keep the
cylinder from spinning about its own axis. Degrees of freedom: slew, boom, jib, 2 swings,
rotator, grapple, 6 of the log = 13.

Contacts (mlcp rows): each jaw touches the log at 2 places along its curve (25 deg above and
40 deg below the log's equator when closed) on each of its two tines (z = +-0.15 m): 8 point
contacts on the log's cylinder, mu = 0.5; the log rests at its ends on two bearers (cross-laid
logs 0.15 m high, so the jaws can close under it), mu = 0.5. Normal stiffness 1e8 N/m, friction
rows 1e10 N/m (a sticking contact creeps at F_t / (k_t h): 0.02 mm over the lift; with 1e12 N/m,
or with three places per tine, the squeezed log's MLCP is too ill-conditioned for the solvers).

Grapple: the jaws start 40 deg open around the log, held still by the grapple cylinder (a joint
force on its stroke equal to what holds them, by virtual work of the linkage) until 0.3 s; from
there to 1.0 s that holding part ramps out and the closing force, a constant 20 kN (a preloaded
spring-damper between barrel and rod, damping 3e4 N s/m, conservative), closes them; they grip
the log at about 0.85 s.

Hydraulics: the cylinder plugin of the shipped cranes (Peiret 2018 Eq. 24-29), with Table 2's
fluid, friction, discharge and compressibility, and for this crane: 125 mm bore (a_p = 0.01227
m^2), stroke l = 0.8 m, pump 21 MPa, valve area a_v = 2e-5 m^2 (about 120 L/min at full opening).
Both cylinders start in the static equilibrium of Eq. 41 (f_eq = the multibody f~ at t = 0).

Control: each spool by a `pd_controller` with a rate reference, the desired actuator velocity:
feed-forward 1/K_v (K_v the valve's velocity gain around the static equilibrium, from Eq. 24-29),
a gain 0.3/K_v on the velocity error and 2/s times that on the position error of the integrated
reference, spool offset saturated to +-0.4; sampled at h_S, measuring the interface position and
velocity the hydraulics sees (the RIM's in Algorithm 2, the multibody model's, held, in
Algorithm 1).

Manoeuvre: 0.3-1.0 s the grapple closes on the log; 1.5-5 s the lift cylinder extends at up to
6 cm/s while the jib cylinder retracts at up to 4 cm/s (0.5 s ramps), lifting the log; then both
hold until 8 s.

mlcp: condensed linear algebra, block pivoting with the friction bounds inside the pivoting,
bilateral stiffness 1e16 N/m (at 1 ms steps 1e12 N/m made the joints' compliance 20 % of the
crane's effective mass at the cylinders), the regularization of the interface model before the
first step taken at h_M. Constraint-residual bounds 1e-3 (m for the joints' points, and for
pᵀp − 1) instead of the formulation's 1e-4: the jaws' impact on the log at 0.82 s drifts the
synchronizing lever's joint by 1.5e-4 m and jaw_right's Euler parameters by 2.5e-4 at h_M = 16 ms
(mlcp's step is first order and projects nothing); 1e-3 still ends a run inaccurate whose joints
come apart by a millimetre.
"""
import copy, json, math, os

G = 9.81

def add(a, b): return [a[i] + b[i] for i in range(3)]
def sub(a, b): return [a[i] - b[i] for i in range(3)]
def mul(s, a): return [s * x for x in a]
def norm(a): return math.sqrt(sum(x * x for x in a))
def unit(a): return mul(1.0 / norm(a), a)
def rotz(a, angle):  # rotate a about z
    c, s = math.cos(angle), math.sin(angle)
    return [c * a[0] - s * a[1], s * a[0] + c * a[1], a[2]]
def about(p, pivot, angle): return add(pivot, rotz(sub(p, pivot), angle))
def r6(v): return [round(x, 6) for x in v]

# ---- Choices (see the docstring) -------------------------------------------------------------
L_BOOM, L_JIB = 4.5, 4.8           # m: reach 9.3 m (Cranab TZ12)
BOOM_ANGLE = math.radians(35.0)    # boom above horizontal at the start
O_B = [0.15, 2.4, 0.0]             # boom pivot on the column
R_LOG, RHO_WOOD, M_LOG = 0.20, 865.0, 500.0
BEARER = 0.15                      # m: height of the bearers the log lies on
JAW_PIN_DX, PIN_ABOVE_LOG = 0.12, 0.45
OPEN = math.radians(40.0)          # jaws open at the start
TINES = (-0.15, 0.15)              # z of each jaw's two tines
CONTACT_ANGLES = (25.0, -40.0)
TINE_RADIUS = 0.02
K_CONTACT, K_FRICTION, MU = 1e8, 1e10, 0.5
F_GRAPPLE, C_GRAPPLE = 20e3, 3e4
CYL = dict(a_p=math.pi / 4 * 0.125 ** 2, l=0.8, p_P=21e6, a_v=2e-5)
V1, V2 = 0.06, -0.04               # m/s: desired lift / jib cylinder rates
T_CLOSE, T_CLOSED, T_UP, T_RAMP, T_DOWN, T_END = 0.3, 1.0, 1.5, 0.5, 5.0, 8.0
SPOOL_LIMIT = 0.4
KD = 0.3                           # velocity-error gain, in units of the inverse valve gain
OMEGA_C = 2.0                      # 1/s: position-error gain over the velocity-error gain

def grapple_holding_force(x_log, y_pin, T, ell, bodies):
    """Grapple cylinder force (positive extending) that holds the open jaws at rest: virtual work
    F ds = dV of the jaws, sync links and rod over a small symmetric closing of the jaws."""
    m = {b["name"]: b["mass"] for b in bodies}
    def state(dtheta):  # both jaws turned towards closed by dtheta from OPEN
        V, H = 0.0, None
        for side, sign in (("left", -1.0), ("right", 1.0)):
            pin = [x_log + sign * JAW_PIN_DX, y_pin, 0.0]
            ang = sign * (OPEN - dtheta)
            com = about([x_log + sign * 0.25, y_pin - PIN_ABOVE_LOG, 0.0], pin, ang)
            lever = about(add(pin, [sign * 0.10, 0.10, 0.0]), pin, ang)
            dx = lever[0] - x_log
            H = [x_log, lever[1] + math.sqrt(ell * ell - dx * dx), 0.0]
            V += G * (m[f"jaw_{side}"] * com[1] + m[f"sync_{side}"] * 0.5 * (lever[1] + H[1]))
        V += G * m["grapple_rod"] * (H[1] + 0.08)
        return V, norm(sub(H, T))
    e = 1e-6
    V0, s0 = state(0.0)
    V1, s1 = state(e)
    return (V1 - V0) / (s1 - s0)


def beam_inertia(m, L, h=0.3):  # box beam along body x
    return [m * h * h / 6, m * (L * L + h * h) / 12, m * (L * L + h * h) / 12]

def description():
    # Positions in the starting configuration.
    u_b = [math.cos(BOOM_ANGLE), math.sin(BOOM_ANGLE), 0.0]
    n_b = [-u_b[1], u_b[0], 0.0]
    O_J = add(O_B, mul(L_BOOM, u_b))
    y_log = R_LOG + BEARER
    y_pin = y_log + PIN_ABOVE_LOG
    y_tip = y_pin + 0.75                      # link 0.4 m, rotator and frame 0.35 m
    s = (y_tip - O_J[1]) / L_JIB
    jib_angle = math.asin(s)
    u_j = [math.cos(jib_angle), math.sin(jib_angle), 0.0]
    n_j = [-u_j[1], u_j[0], 0.0]
    O_T = add(O_J, mul(L_JIB, u_j))
    x_log = O_T[0]
    log_c = [x_log, y_log - M_LOG * G / (2 * K_CONTACT), 0.0]  # resting compression
    L_log = M_LOG / (RHO_WOOD * math.pi * R_LOG ** 2)

    A = [0.45, 1.25, 0.0]                                    # lift cylinder on the column
    B = add(add(O_B, mul(1.2, u_b)), mul(-0.25, n_b))        # ... on the boom, below it
    C = add(add(O_B, mul(2.6, u_b)), mul(0.30, n_b))         # jib cylinder on the boom, above it
    K = add(add(O_J, mul(-0.25, u_j)), mul(0.45, n_j))       # ... on the jib's lever
    z = [0.0, 0.0, 1.0]

    bodies, joints, forces, contacts = [], [], [], []
    def body(name, m, I, pos, angle=0.0, doc=None):
        b = {"name": name, "mass": m, "inertia": [round(x, 6) for x in I], "position": r6(pos)}
        if angle:
            b["orientation"] = {"axis": [0, 0, 1], "angle": round(angle, 9)}
        if doc:
            b["doc"] = doc
        bodies.append(b)
    def joint(name, kind, bi, bj, point, axis=None, **kw):
        j = {"name": name, "type": kind, "bodies": [bi, bj], "point": r6(point)}
        if axis is not None:
            j["axis"] = r6(axis)
        j.update(kw)
        joints.append(j)

    body("pillar", 350.0, [49.3, 14.6, 49.3], [0.0, 0.6, 0.0], doc="crane base, 1.2 m high")
    body("column", 250.0, [33.3, 6.7, 33.3], [0.05, 1.8, 0.0], doc="slewing column up to the boom pivot")
    body("boom", 420.0, beam_inertia(420.0, L_BOOM), add(O_B, mul(L_BOOM / 2, u_b)), BOOM_ANGLE)
    body("jib", 330.0, beam_inertia(330.0, L_JIB, 0.25), add(O_J, mul(L_JIB / 2, u_j)), jib_angle)
    joint("base", "fixed", "ground", "pillar", [0.0, 0.0, 0.0], [0, 1, 0])
    joint("slew", "revolute", "pillar", "column", [0.0, 1.2, 0.0], [0, 1, 0])
    joint("boom_pin", "revolute", "column", "boom", O_B, z)
    joint("jib_pin", "revolute", "boom", "jib", O_J, z)
    forces.append({"type": "joint_spring_damper", "joint": "slew", "stiffness": 5e6, "damping": 5e4,
                   "doc": "slewing gear held by its valve"})

    for name, frm, to, P, Q, m_barrel, m_rod, host_i, host_j in (
            ("lift", "column", "boom", A, B, 70.0, 35.0, "column", "boom"),
            ("jib_cyl", "boom", "jib", C, K, 60.0, 30.0, "boom", "jib")):
        c = unit(sub(Q, P))
        L = norm(sub(Q, P))
        body(f"{name}_barrel", m_barrel, beam_inertia(m_barrel, 0.9, 0.16), add(P, mul(0.45, c)), math.atan2(c[1], c[0]))
        body(f"{name}_rod", m_rod, beam_inertia(m_rod, 0.9, 0.08), sub(Q, mul(0.45, c)), math.atan2(c[1], c[0]))
        joint(f"{name}_barrel_end", "spherical", host_i, f"{name}_barrel", P)
        joint(f"{name}_stroke", "prismatic", f"{name}_barrel", f"{name}_rod", add(P, mul(0.5 * L, c)), c)
        joint(f"{name}_rod_end", "universal", f"{name}_rod", host_j, Q, r6([-c[1], c[0], 0.0]), axis_j=[0, 0, 1])

    # Swing link (two crossed pins) and rotator.
    body("link_upper", 12.0, [0.06, 0.03, 0.06], sub(O_T, [0, 0.1, 0]))
    body("link_lower", 12.0, [0.06, 0.03, 0.06], sub(O_T, [0, 0.3, 0]))
    body("rotator", 70.0, [1.2, 0.8, 1.2], sub(O_T, [0, 0.55, 0]), doc="rotator with the grapple frame")
    joint("swing_x", "revolute", "jib", "link_upper", O_T, z)
    joint("swing_z", "revolute", "link_upper", "link_lower", sub(O_T, [0, 0.2, 0]), [1, 0, 0])
    joint("rotation", "revolute", "link_lower", "rotator", sub(O_T, [0, 0.4, 0]), [0, 1, 0])
    forces += [{"type": "joint_spring_damper", "joint": "swing_x", "damping": 2e3, "doc": "swing damper"},
               {"type": "joint_spring_damper", "joint": "swing_z", "damping": 2e3, "doc": "swing damper"},
               {"type": "joint_spring_damper", "joint": "rotation", "stiffness": 5e4, "damping": 2e3,
                "doc": "rotator motor held by its valve"}]

    # Grapple: jaws given closed around the log, then opened by OPEN about their pins.
    log_axis_c = [x_log, y_log, 0.0]
    T = [x_log, y_pin + 0.60, 0.0]           # grapple cylinder hinge on the frame
    H_closed = [x_log, y_pin + 0.25, 0.0]    # rod head, jaws closed
    levers = {}
    for side, sign in (("left", -1.0), ("right", 1.0)):
        pin = [x_log + sign * JAW_PIN_DX, y_pin, 0.0]
        open_angle = sign * OPEN            # right jaw opens counter-clockwise
        lever_c = add(pin, [sign * 0.10, 0.10, 0.0])
        body(f"jaw_{side}", 45.0, [2.0, 0.8, 2.4], about(add(log_axis_c, [sign * 0.25, 0.0, 0.0]), pin, open_angle), open_angle)
        joint(f"jaw_{side}_pin", "revolute", "rotator", f"jaw_{side}", pin, z)
        for a in CONTACT_ANGLES:
            ang = math.radians(a)
            for tz in TINES:
                p_closed = [x_log + sign * (R_LOG + TINE_RADIUS) * math.cos(ang), y_log + (R_LOG + TINE_RADIUS) * math.sin(ang), tz]
                p_open = about(p_closed, [pin[0], pin[1], tz], open_angle)
                contacts.append({"name": f"jaw_{side}_{int(a)}_{'front' if tz > 0 else 'back'}", "body": f"jaw_{side}",
                                 "point": r6(p_open), "radius": TINE_RADIUS, "friction": MU, "stiffness": K_CONTACT,
                                 "friction_stiffness": K_FRICTION,
                                 "surface": {"body": "log", "shape": "cylinder", "point": r6([x_log, log_c[1], 0.0]), "axis": [0, 0, 1],
                                             "radius": R_LOG}})
        levers[side] = about(lever_c, pin, open_angle)
        ell = norm(sub(lever_c, H_closed))  # sync link length
    # Rod head of the open grapple: on the axis, a link length from the (symmetric) levers.
    dx = levers["right"][0] - x_log
    H = [x_log, levers["right"][1] + math.sqrt(ell * ell - dx * dx), 0.0]
    for side in ("left", "right"):
        lever = levers[side]
        d = unit(sub(lever, H))
        body(f"sync_{side}", 6.0, beam_inertia(6.0, 0.27, 0.05), mul(0.5, add(lever, H)), math.atan2(d[1], d[0]))
    body("grapple_barrel", 15.0, [0.05, 0.02, 0.05], [x_log, y_pin + 0.50, 0.0])
    body("grapple_rod", 8.0, [0.02, 0.01, 0.02], add(H, [0, 0.08, 0]))
    joint("grapple_hinge", "revolute", "rotator", "grapple_barrel", T, z)
    joint("grapple_stroke", "prismatic", "grapple_barrel", "grapple_rod", [x_log, y_pin + 0.45, 0.0], [0, -1, 0])
    for side in ("left", "right"):
        lever = levers[side]
        d = unit(sub(lever, H))
        joint(f"sync_{side}_head", "spherical", f"sync_{side}", "grapple_rod", H)
        joint(f"sync_{side}_lever", "universal", f"sync_{side}", f"jaw_{side}", lever, r6([-d[1], d[0], 0.0]), axis_j=[0, 0, 1])
    joint("grapple_guide", "point_on_plane", "grapple_rod", "rotator", H, [1, 0, 0])
    # Closing force F_GRAPPLE (conservative: a preloaded spring-damper, extending closes the jaws
    # through the sync links) and, until T_CLOSE, the difference to the force that holds the
    # open jaws at rest (virtual work of the grapple linkage), ramped out by T_CLOSED.
    f_hold = grapple_holding_force(x_log, y_pin, T, ell, bodies)
    forces.append({"type": "spring_damper", "name": "grapple_cylinder", "bodies": ["grapple_barrel", "grapple_rod"],
                   "points": [r6(T), r6(H)], "stiffness": 0.0, "damping": C_GRAPPLE, "preload": F_GRAPPLE,
                   "doc": "constant closing force with the cylinder's flow resistance"})
    if OPEN != 0.0:
        forces.append({"type": "joint_effort", "name": "grapple_valve", "joint": "grapple_stroke",
                       "table": {"t": [0.0, T_CLOSE, T_CLOSED], "values": [round(f_hold - F_GRAPPLE, 3)] * 2 + [0.0]},
                       "doc": f"holds the jaws open (net {f_hold:.1f} N) until {T_CLOSE} s, then lets the closing force act"})

    # Log and its bearers.
    I_ax = 0.5 * M_LOG * R_LOG ** 2
    I_tr = M_LOG * (3 * R_LOG ** 2 + L_log ** 2) / 12
    body("log", M_LOG, [I_tr, I_tr, I_ax], log_c, doc=f"{L_log:.2f} m long, {2 * R_LOG:.2f} m thick, {RHO_WOOD:.0f} kg/m^3")
    for end, zs in (("front", 1), ("back", -1)):
        zc = zs * (L_log / 2 - 0.3)
        contacts.append({"name": f"bearer_{end}", "body": "log", "point": r6([x_log, log_c[1], zc]), "radius": R_LOG,
                         "normal": [0, 1, 0], "plane_point": [0, BEARER, 0], "friction": MU, "stiffness": K_CONTACT,
                         "friction_stiffness": K_FRICTION})

    desc = {
        "doc": "Hydraulic log crane of Peiret's nonsmooth interface model abstract (Sect. 4): 18 bodies, 22 joints; "
               "written by scripts/log_crane_manifests.py, which lists every choice",
        "gravity": [0.0, -G, 0.0],
        "coupling": "force",
        "bodies": bodies,
        "joints": joints,
        "forces": forces,
        "actuators": [
            {"name": "s1", "bodies": ["lift_barrel", "lift_rod"], "points": [r6(A), r6(B)], "doc": "lift cylinder"},
            {"name": "s2", "bodies": ["jib_cyl_barrel", "jib_cyl_rod"], "points": [r6(C), r6(K)], "doc": "jib cylinder"},
        ],
        "contacts": contacts,
        "points": [
            {"name": "log_centre", "body": "log", "point": r6(log_c)},
            {"name": "log_in_grapple", "body": "log", "point": r6(log_c), "frame": "rotator",
             "doc": "the log's centre relative to the grapple"},
            {"name": "jib_tip", "body": "jib", "point": r6(O_T)},
        ],
    }
    info = {"x_log": x_log, "jib_angle_deg": math.degrees(jib_angle), "log_length": L_log, "s1": norm(sub(B, A)),
            "s2": norm(sub(K, C)), "bodies": len(bodies), "joints": len(joints), "contacts": len(contacts)}
    return desc, info


def velocity_table(v):
    t = [0.0, T_UP, T_UP + T_RAMP, T_DOWN - T_RAMP, T_DOWN]
    return t, [0.0, 0.0, v, v, 0.0]


def cylinder_velocity_gain(f):
    """Steady rate per unit spool offset of the cylinder (Eq. 24-29) holding force f: the
    feed-forward gain of the controllers is its inverse."""
    a_p, a_v, p_P, p_T, c_d, rho, c = CYL["a_p"], CYL["a_v"], CYL["p_P"], 0.1e6, 0.67, 850.0, 1e5
    def orifice(dp): return c_d * math.sqrt(2 * dp / rho) if dp > 0 else 0.0
    def state(kappa):  # solve flows = 0 with rate v and force balance, by bisection on v
        def residual(v):  # p1 from chamber 1's flow balance, then p2 from the force, then chamber 2's flow
            lo, hi = p_T, p_P
            for _ in range(200):
                p1 = 0.5 * (lo + hi)
                q = a_p * v + a_v * kappa * orifice(p_P - p1) - a_v * (1 - kappa) * orifice(p1 - p_T)
                lo, hi = (p1, hi) if q > 0 else (lo, p1)
            p2 = p1 + (f + c * v) / a_p
            return -a_p * v + a_v * (1 - kappa) * orifice(p_P - p2) - a_v * kappa * orifice(p2 - p_T)
        lo, hi = -1.0, 1.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if residual(mid) > 0 else (lo, mid)
        return 0.5 * (lo + hi)
    # κ0: zero rate; then the slope around it.
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if state(mid) < 0 else (mid, hi)  # v falls as κ grows (chamber 1 fills)
    k0 = 0.5 * (lo + hi)
    dk = 0.01
    return (state(k0 + dk) - state(k0 - dk)) / (2 * dk), k0


def manifest(scheme, h_M, static_forces):
    im = scheme == "im"
    subs = {"crane": {"plugin": "mechanism", "parameters": {"description_file": "log_crane.description.json"},
                      "step": "$h_M", "formulation": {"plugin": "mlcp", "parameters": {
                          "solver": "bpp_coupled", "max_pivots": 100, "iterations": 1000, "stiffness": 1e16, "initial_step": "$h_M", "linear_algebra": "condensed",
                          "max_position_residual": 1e-3, "max_normalization_residual": 1e-3}}}}
    conns = []
    def link(a, b, extrapolator="zoh"):
        conns.append({"from": a, "to": b, "extrapolator": extrapolator})
    if im:
        subs["rim"] = {"plugin": "rim", "parameters": {"actuators": 2, "sync_interval": "$h_M", "coupling": "force"}, "step": "$h_S"}
        for p, q in (("s", "s_M"), ("s_dot", "s_dot_M"), ("M_eff", "M_eff"), ("f_eff", "f_eff")):
            link(f"crane.{p}", f"rim.{q}")
    gains = {}
    for k, v in ((1, V1), (2, V2)):
        cyl = dict(CYL)
        cyl.update({"coupling": "force", "initialize": "equilibrium", "valve_law": "input"})
        subs[f"cylinder{k}"] = {"plugin": "cylinder", "parameters": cyl, "step": "$h_S", "integrator": "semi_implicit_euler"}
        gain, k0 = cylinder_velocity_gain(static_forces[k - 1])
        gains[k] = (gain, k0)
        t, vals = velocity_table(v)
        subs[f"pd{k}"] = {"plugin": "pd_controller", "step": "$h_S", "parameters": {
            "reference_is": "rate", "kff": round(1.0 / gain, 4), "kd": round(KD / gain, 4), "kp": round(OMEGA_C * KD / gain, 4),
            "u_min": -SPOOL_LIMIT, "u_max": SPOOL_LIMIT, "reference_times": t, "reference_values": vals,
            "input_unit": "m", "output_unit": "1"}}
        src = "rim" if im else "crane"
        hold = "zoh" if im else {"plugin": "lagrange", "parameters": {"order": "$order"}}
        link(f"{src}.s[{k - 1}]", f"cylinder{k}.s", hold)
        link(f"{src}.s_dot[{k - 1}]", f"cylinder{k}.s_dot", hold)
        link(f"crane.f_eff[{k - 1}]", f"cylinder{k}.f_eq")
        link(f"cylinder{k}.f_h", f"crane.f_h[{k - 1}]")
        if im:
            link(f"cylinder{k}.f_h", f"rim.f_h[{k - 1}]")
        link(f"{src}.s[{k - 1}]", f"pd{k}.y", hold)
        link(f"{src}.s_dot[{k - 1}]", f"pd{k}.y_dot", hold)
        link(f"pd{k}.u", f"cylinder{k}.kappa_offset")
    variables = {"h_M": h_M, "h_S": 0.0002}
    if not im:
        variables["order"] = 0
    coupling = {"scheme": "jacobi", "macro_step": "$h_S" if im else "$h_M", "start": 0.0, "end": T_END}
    if im:
        coupling["align"] = False
    bounds = {f"cylinder{k}.{p}": [0, 25e6] for k in (1, 2) for p in ("p1", "p2")}
    m = {
        "format": 1,
        "title": "Hydraulic log crane (Peiret, nonsmooth interface model abstract, Sect. 4): 18 bodies, 22 joints, a 500 kg log "
                 "grasped by a two-jaw grapple (unilateral contacts with friction, mlcp) and lifted by two PD-controlled hydraulic "
                 "cylinders, h_S = 0.2 ms; " + ("nonsmooth interface model through the RIM subsystem (Algorithm 2)" if im
                                                else "direct co-simulation with zero-order hold (Algorithm 1)"),
        "variables": variables,
        "subsystems": subs,
        "connections": conns,
        "coupling": coupling,
        "record": {"interval": 0.01, "variables": [
            "crane.s", "crane.s_dot", "cylinder1.f_h", "cylinder2.f_h", "cylinder1.p1", "cylinder1.p2", "cylinder2.p1", "cylinder2.p2",
            "cylinder1.kappa", "cylinder2.kappa", "pd1.error", "pd2.error", "crane.log_centre", "crane.log_in_grapple", "crane.jib_tip"]},
        "monitor": {"bounds": bounds, "energy_residual_limit": 2e4},
        "output": f"out/log_crane_{scheme}",
    }
    return m, gains


def static_forces(desc):
    """Cylinder forces that hold the crane at rest (planar virtual work: the grapple and log hang
    from the jib tip), only for the controllers' gains: the run itself starts from Eq. 41 with
    the multibody model's own f~."""
    b = {x["name"]: x for x in desc["bodies"]}
    O_J = [O_B[0] + L_BOOM * math.cos(BOOM_ANGLE), O_B[1] + L_BOOM * math.sin(BOOM_ANGLE)]
    hanging = sum(x["mass"] for n, x in b.items() if n not in ("pillar", "column", "boom", "jib", "lift_barrel", "lift_rod",
                                                              "jib_cyl_barrel", "jib_cyl_rod"))
    A, B = desc["actuators"][0]["points"]
    C, K = desc["actuators"][1]["points"]
    def V(db, dj):
        Ob = O_B
        def rb(p): return about(p, Ob, db)
        OJ = rb(O_J + [0.0])
        def rj(p): return about(rb(p), OJ, dj)
        y = b["boom"]["mass"] * rb(b["boom"]["position"])[1] + b["jib"]["mass"] * rj(b["jib"]["position"])[1]
        y += hanging * rj(desc["points"][2]["point"])[1]
        y += 0.5 * (b["lift_rod"]["mass"] + b["lift_barrel"]["mass"]) * rb(B)[1]
        y += 0.5 * (b["jib_cyl_rod"]["mass"] + b["jib_cyl_barrel"]["mass"]) * (rb(C)[1] + rj(K)[1])
        s1 = norm(sub(rb(B), A))
        s2 = norm(sub(rj(K), rb(C)))
        return G * y, s1, s2
    e = 1e-6
    V0, s10, s20 = V(0, 0)
    Vb, s1b, s2b = V(e, 0)
    Vj, s1j, s2j = V(0, e)
    # The cylinders' work is the potential gained: dV = f . ds  =>  J^T f = [dV/db, dV/dj], J = ds/d(b, j)
    J = [[(s1b - s10) / e, (s1j - s10) / e], [(s2b - s20) / e, (s2j - s20) / e]]
    g = [(Vb - V0) / e, (Vj - V0) / e]
    det = J[0][0] * J[1][1] - J[0][1] * J[1][0]
    f1 = (g[0] * J[1][1] - g[1] * J[1][0]) / det
    f2 = (g[1] * J[0][0] - g[0] * J[0][1]) / det
    return [f1, f2]


if __name__ == "__main__":
    desc, info = description()
    print("log crane:", json.dumps(info))
    os.makedirs("manifests/log_crane", exist_ok=True)
    with open("manifests/log_crane/log_crane.description.json", "w") as f:
        json.dump(desc, f, indent=1)
        f.write("\n")
    forces = static_forces(desc)
    print("static cylinder forces (virtual work, estimate):", [round(f) for f in forces])
    for scheme, h in (("im", 0.016), ("zoh", 0.016)):
        m, gains = manifest(scheme, h, forces)
        m = {"$schema": "../../docs/schema/manifest.schema.json", **m}  # for editors (docs/schema/)
        with open(f"manifests/log_crane/log_crane_{scheme}.json", "w") as f:
            json.dump(m, f, indent=1)
            f.write("\n")
    print("velocity gains (m/s per unit spool offset) and kappa0:", gains)
    sweep = {
        "$schema": "../../docs/schema/sweep.schema.json",
        "format": 1,
        "title": "Log crane (Peiret, nonsmooth interface model abstract, Sect. 4): largest stable multibody step, direct ZOH vs the "
                 "nonsmooth interface model, h_S = 0.2 ms; errors against direct ZOH at h_M = 0.5 ms (no monolithic model of the "
                 "log crane exists)",
        "manifest": "../log_crane/log_crane_im.json",
        "reference": {"manifest": "../log_crane/log_crane_zoh.json", "set": {"/variables/h_M": 0.0005},
                      "columns": {"crane.s.s1": "crane.s.s1", "crane.s.s2": "crane.s.s2"}},
        "axes": [
            {"name": "h_M", "pointers": ["/variables/h_M"], "values": [0.001, 0.002, 0.004, 0.008, 0.012, 0.016, 0.02, 0.024, 0.032]},
            {"name": "coupling", "values": [{"label": "ZOH", "manifest": "../log_crane/log_crane_zoh.json"},
                                            {"label": "interface model", "manifest": "../log_crane/log_crane_im.json"}]},
        ],
        "step_axis": "h_M",
        "usable_error": 0.002,
        "output": "out/sweeps/log_crane_stability",
    }
    with open("manifests/sweeps/log_crane_stability.json", "w") as f:
        json.dump(sweep, f, indent=2)
        f.write("\n")
