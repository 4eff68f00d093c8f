#!/usr/bin/env python3
"""Writes the mechanism descriptions and manifests under manifests/mechanism/ (run from the
repository root; the JSON files are committed, this script shows how the numbers were made).

Planar crane of Peiret 2018 Sect. 4.1 (Table 1) as a spatial mechanism moving in the x-y plane:
  boom: uniform rod O-Q (m = 200 kg, L = 1 m) plus the point mass m_p = 250 kg at Q, one body;
  tip:  the massless link Q-R (L_h = 0.5 m) with the point mass m_h = 100 kg at R, one body whose
        centre of mass is R; a point mass has no rotational inertia, so the tip gets 1e-9 kg m^2
        (a relative change of M_eff below 1e-10, far under the cross-check tolerance).
  joints: revolute O (ground-boom) and Q (boom-tip), both about z.
  actuator 1: B = (sqrt(3)/2, 0) to P, the midpoint of the boom; actuator 2: P to the midpoint
  of Q-R (on the tip body), exactly the crane_dependent plugin's s2 = |R|/2.
"""
import json, math, copy, os

def crane_description(actuators, coupling="force", theta1=math.pi / 6, theta2=1.5 * math.pi):
    L, Lh, m, mp, mh = 1.0, 0.5, 200.0, 250.0, 100.0
    u = [math.cos(theta1), math.sin(theta1), 0.0]
    Q = [L * u[0], L * u[1], 0.0]
    R = [Q[0] + Lh * math.cos(theta2), Q[1] + Lh * math.sin(theta2), 0.0]
    P = [0.5 * Q[0], 0.5 * Q[1], 0.0]
    mb = m + mp
    c = (m * L / 2 + mp * L) / mb  # centre of mass of the boom from O
    I = m * L * L / 12 + m * (L / 2 - c) ** 2 + mp * (L - c) ** 2  # about any axis normal to the rod
    eps = 1e-9
    # inertia of a line mass along u: I (1 - u u^T) + eps u u^T, in global = body axes
    J = [[I * ((1 if i == j else 0) - u[i] * u[j]) + eps * u[i] * u[j] for j in range(3)] for i in range(3)]
    desc = {
        "gravity": [0.0, -9.81, 0.0],
        "coupling": coupling,
        "bodies": [
            {"name": "boom", "mass": mb, "position": [c * u[0], c * u[1], 0.0],
             "inertia": [J[0][0], J[1][1], J[2][2], J[0][1], J[0][2], J[1][2]],
             "doc": "rod O-Q (200 kg) with the 250 kg point mass at Q"},
            {"name": "tip", "mass": mh, "position": R, "inertia": [eps, eps, eps],
             "doc": "massless link Q-R with the 100 kg point mass at R"},
        ],
        "joints": [
            {"name": "O", "type": "revolute", "bodies": ["ground", "boom"], "point": [0.0, 0.0, 0.0], "axis": [0, 0, 1]},
            {"name": "Q", "type": "revolute", "bodies": ["boom", "tip"], "point": Q, "axis": [0, 0, 1]},
        ],
        "actuators": [
            {"name": "s1", "bodies": ["ground", "boom"], "points": [[math.sqrt(3) / 2, 0.0, 0.0], P]},
        ],
        "points": [{"name": "R", "body": "tip", "point": R}],
    }
    if actuators == 2:
        M2 = [(Q[i] + R[i]) / 2 for i in range(3)]
        desc["actuators"].append({"name": "s2", "bodies": ["boom", "tip"], "points": [P, M2]})
    return desc

def crane_manifest(src, dst):
    m = json.load(open(src))
    crane = m["subsystems"]["crane"]
    p = crane["parameters"]
    acts, coupling = p.get("actuators", 1), p.get("coupling", "force")
    if coupling == "pressure":
        for a in ("a_p", "c"):
            assert a not in p
    crane["plugin"] = "mechanism"
    crane["parameters"] = {"description": crane_description(acts, coupling)}
    crane["formulation"] = "ali3p"
    m["title"] = m["title"] + "; the crane described as a mechanism (plugin mechanism, formulation ali3p)"
    rec = m.get("record", {}).get("variables", [])
    m["record"]["variables"] = [v.replace("crane.x_R_dot", "crane.R_dot").replace("crane.x_R", "crane.R") for v in rec]
    m["output"] = "out/" + os.path.splitext(os.path.basename(dst))[0]
    m["$schema"] = "../../docs/schema/manifest.schema.json"  # (first key, as in src; dst is a folder deeper)
    json.dump(m, open(dst, "w"), indent=2)
    open(dst, "a").write("\n")

if __name__ == "__main__":
    for name in ("crane1_rim", "crane1_zoh", "crane1_zoh_vp", "crane2_rim", "crane2_zoh", "crane2_zoh_vp"):
        crane_manifest(f"manifests/{name}.json", f"manifests/mechanism/{name}.json")


# ---- Juno rover with the two-link hydraulic manipulator (Peiret 2018 Sect. 4.2, Appendix B) ----
# Axes: x forward, y up, z to starboard (Table 6 gives lateral distances as z); terrain y = 0.
# Table 6: r, b, d1 (wheelbase of a bogie), d2 (bogie centres apart), d3 (wheel centres apart),
# h1 (top of the chassis), h2 (bogie c.o.m.), h3 (chassis c.o.m.), heights with the wheels on
# the surface. Table 7 inertias are used in body axes aligned with x, y, z, except the wheels,
# whose largest moment (Table 7's I_x, the spin axis) is put on z, the axle.
# Choices where the paper gives no geometry (Fig. 9 is a sketch):
#  - bogie pivots at the bogie centres of mass; wheel axles at the wheel centres;
#  - differential: chassis pitch = mean of the bogie pitches, i.e. the two bogie joint angles
#    (bogie relative to chassis) sum to zero;
#  - manipulator base O on the chassis top, 0.3 m ahead of the chassis centre, in the
#    vertical x-y mid-plane; link 1 (0.9 m, 15 kg) at theta1 = 45 deg, link 2 (0.5 m, 25 kg)
#    at theta2 = -90 deg, both uniform (c.o.m. at mid-length);
#  - cylinder 1 from the chassis point B = O + e (cos 135, sin 135) (e = 0.1 m, behind and
#    above O) to the point P of link 1 at distance d_P from O; d_P is chosen so that the static
#    force of cylinder 1 equals Table 4's (p2 - p1) a_p = (3.66 - 4.04) MPa * 65 cm^2
#    = -2470 N (the pressures of Table 4 are then the cylinder's Eq. 41, checked in the tests);
#  - cylinder 2 from link 1, 0.2 m before the elbow Q, to link 2, e = 0.1 m below Q: with link 2
#    hanging its static force is zero, as Table 4's equal pressures say;
#  - initial sinkage: every wheel starts sunk to the depth whose Eq. 58 load carries a quarter
#    of the total weight at zero slip; the mechanism plugin then solves the static equilibrium
#    on the soil with the cylinders locked ("static_equilibrium": true), so the cylinders'
#    Eq. 41 initialization sees the static forces.

import math

SLIP = 0.1  # m/s: slip regularization and the standstill blend of the wheel law (terramechanics_wheel)
TABLE8 = dict(n=1.0, c=220.0, phi=math.radians(33.1), k_c=1.4e3, k_phi=2000e3, K=0.015)
R_WHEEL, B_WHEEL = 0.2795, 0.2340

def wheel_load(z, slip=0.0, N=400):
    r, b, s = R_WHEEL, B_WHEEL, TABLE8
    th1 = math.acos(1 - z / r)
    tot = 0.0
    for i in range(N):  # midpoint rule, fine enough for the starting depth
        th = th1 * (i + 0.5) / N
        sig = (s["k_c"] / b + s["k_phi"]) * max(0.0, r * (math.cos(th) - math.cos(th1))) ** s["n"]
        j = r * (th1 - th - (1 - slip) * (math.sin(th1) - math.sin(th)))
        tau = (s["c"] + sig * math.tan(s["phi"])) * (1 - math.exp(-j / s["K"]))
        tot += (tau * math.sin(th) + sig * math.cos(th)) * th1 / N
    return r * b * tot

def rover_description(g=9.81):
    r, d1, d2, d3, h1, h2, h3 = R_WHEEL, 0.8350, 1.2560, 1.5420, 0.4335, 0.3045, 0.3295
    m_wheel, m_bogie, m_chassis, m1, m2 = 10.0, 70.0, 140.0, 15.0, 25.0
    L1, L2, e = 0.9, 0.5, 0.1
    th1, th2 = math.radians(45), math.radians(-90)
    total = 4 * m_wheel + 2 * m_bogie + m_chassis + m1 + m2
    lo, hi = 1e-5, 0.2
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if wheel_load(mid) < total * g / 4 else (lo, mid)
    z0 = 0.5 * (lo + hi)
    dy = -z0  # everything sits z0 lower than with the wheels on the surface
    O = [0.3, h1 + dy, 0.0]
    u1 = [math.cos(th1), math.sin(th1), 0.0]
    u2 = [math.cos(th2), math.sin(th2), 0.0]
    Q = [O[i] + L1 * u1[i] for i in range(3)]
    Rt = [Q[i] + L2 * u2[i] for i in range(3)]
    c1 = [O[i] + 0.5 * L1 * u1[i] for i in range(3)]
    c2 = [Q[i] + 0.5 * L2 * u2[i] for i in range(3)]
    # gravity torque about O of both links (link 2 hangs: no torque about Q)
    torque = g * (m1 * (c1[0] - O[0]) + m2 * (c2[0] - O[0]))
    B = [O[0] + e * math.cos(math.radians(135)), O[1] + e * math.sin(math.radians(135)), 0.0]
    f_target = (3.66e6 - 4.04e6) * 65e-4

    def f_static(dP):  # cylinder-1 force (positive extending) that holds the arm
        P = [O[i] + dP * u1[i] for i in range(3)]
        d = [P[i] - B[i] for i in range(3)]
        s = math.sqrt(sum(x * x for x in d))
        # torque of force f along +d (from B to P) at P about O: (P - O) x (f d/s)
        arm = ((P[0] - O[0]) * d[1] - (P[1] - O[1]) * d[0]) / s
        return torque / arm

    lo, hi = 0.05, 0.85
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        # |f| decreases with d_P; find f_static(d_P) = f_target
        lo, hi = (mid, hi) if abs(f_static(mid)) > abs(f_target) else (lo, mid)
    dP = 0.5 * (lo + hi)
    P = [O[i] + dP * u1[i] for i in range(3)]
    D = [Q[i] - 0.2 * u1[i] for i in range(3)]
    C = [Q[i] + e * u2[i] for i in range(3)]
    axis_z = {"axis": [0, 0, 1], "angle": 0.0}
    bodies = [
        {"name": "chassis", "mass": m_chassis, "inertia": [9.16, 8.396, 9.16], "position": [0.0, h3 + dy, 0.0]},
        {"name": "bogie_port", "mass": m_bogie, "inertia": [9.16, 18.32, 9.16], "position": [0.0, h2 + dy, -d2 / 2]},
        {"name": "bogie_starboard", "mass": m_bogie, "inertia": [9.16, 18.32, 9.16], "position": [0.0, h2 + dy, d2 / 2]},
    ]
    joints = [
        {"name": "bogie_port", "type": "revolute", "bodies": ["chassis", "bogie_port"], "point": [0.0, h2 + dy, -d2 / 2], "axis": [0, 0, 1]},
        {"name": "bogie_starboard", "type": "revolute", "bodies": ["chassis", "bogie_starboard"], "point": [0.0, h2 + dy, d2 / 2], "axis": [0, 0, 1]},
    ]
    forces = []
    t = [0.0, 0.1, 0.1, 0.8, 0.8, 1.6, 1.6, 100.0]
    tables = {"port": [0, 0, 75, 75, 0, 0, 75, 75], "starboard": [0, 0, -75, -75, 0, 0, 75, 75]}
    for side, zs in (("port", -1), ("starboard", 1)):
        for end, xs in (("front", 1), ("rear", -1)):
            name = f"wheel_{end}_{side}"
            centre = [xs * d1 / 2, r + dy, zs * d3 / 2]
            bodies.append({"name": name, "mass": m_wheel, "inertia": [0.3906, 0.3906, 0.7812], "position": centre})
            # axis -z: a positive joint angle rolls the wheel forward (+x)
            joints.append({"name": name, "type": "revolute", "bodies": [f"bogie_{side}", name], "point": centre, "axis": [0, 0, -1]})
            forces.append({"type": "joint_effort", "name": f"motor_{end}_{side}", "joint": name,
                           "table": {"t": t, "values": tables[side]}})
            forces.append({"type": "plugin", "plugin": "terramechanics_wheel", "name": f"soil_{end}_{side}", "body": name,
                           "point": centre, "parameters": {"axis": [0, 0, 1], "up": [0, 1, 0], "ground_point": [0, 0, 0], "slip_speed": SLIP}})
    bodies += [
        {"name": "link1", "mass": m1, "inertia": [31.25e-4, 56.25e-3, 56.25e-3], "position": c1, "orientation": {"axis": [0, 0, 1], "angle": th1}},
        {"name": "link2", "mass": m2, "inertia": [2.08e-4, 10.42e-3, 10.42e-3], "position": c2, "orientation": {"axis": [0, 0, 1], "angle": th2}},
    ]
    joints += [
        {"name": "shoulder", "type": "revolute", "bodies": ["chassis", "link1"], "point": O, "axis": [0, 0, 1]},
        {"name": "elbow", "type": "revolute", "bodies": ["link1", "link2"], "point": Q, "axis": [0, 0, 1]},
    ]
    return {
        "gravity": [0.0, -g, 0.0],
        "coupling": "force",
        "static_equilibrium": True,
        "bodies": bodies,
        "joints": joints,
        "couplers": [{"name": "differential", "joints": ["bogie_port", "bogie_starboard"], "coefficients": [1.0, 1.0],
                      "doc": "chassis pitch = mean of the bogie pitches"}],
        "forces": forces,
        "actuators": [
            {"name": "s1", "bodies": ["chassis", "link1"], "points": [B, P], "doc": f"d_P = {dP:.6f} m, static force {f_static(dP):.1f} N"},
            {"name": "s2", "bodies": ["link1", "link2"], "points": [D, C]},
        ],
        "points": [{"name": "tip", "body": "link2", "point": Rt}, {"name": "chassis_centre", "body": "chassis", "point": [0.0, h3 + dy, 0.0]}],
    }, {"z0": z0, "d_P": dP, "f1_static": f_static(dP)}

def rover_manifest(scheme, h_M):
    desc, info = rover_description()
    crane = json.load(open(f"manifests/crane2_{scheme}.json"))
    m = copy.deepcopy(crane)
    m["title"] = ("Juno rover with a two-link hydraulic manipulator (Peiret 2018 Sect. 4.2), " +
                  ("direct ZOH co-simulation (Algorithm 1)" if scheme == "zoh" else "RIM co-simulation (Algorithm 2)"))
    m["variables"] = {"h_M": h_M, "h_S": 0.0002}
    if scheme == "zoh":
        m["variables"]["order"] = 0
    m["subsystems"]["crane"] = {"plugin": "mechanism", "parameters": {"description": desc}, "step": "$h_M", "formulation": "ali3p"}
    for k in ("cylinder1", "cylinder2"):
        m["subsystems"][k]["parameters"]["l"] = 0.3
    m["subsystems"]["cylinder1"]["parameters"]["valve_times"] = [0.0, 1.0, 1.6]
    m["subsystems"]["cylinder1"]["parameters"]["valve_offsets"] = [0.0, 0.0, 0.005]  # Eq. 36
    m["subsystems"]["cylinder2"]["parameters"]["valve_times"] = [0.0, 1.0]
    m["subsystems"]["cylinder2"]["parameters"]["valve_offsets"] = [0.0, -0.01]  # Eq. 37
    m["subsystems"]["rover"] = m["subsystems"].pop("crane")
    txt = json.dumps(m).replace('"crane.', '"rover.').replace('"crane"', '"rover"')
    m = json.loads(txt)
    m["coupling"]["end"] = 2.5
    m["record"]["variables"] = ["rover.s", "rover.s_dot", "cylinder1.p1", "cylinder1.p2", "cylinder1.kappa", "cylinder2.p1",
                                "cylinder2.p2", "cylinder2.kappa", "rover.chassis_centre", "rover.tip"]
    m["monitor"]["energy_residual_limit"] = 1e6
    m["output"] = f"out/juno_{scheme}"
    m["$schema"] = "../../docs/schema/manifest.schema.json"  # (first key, as in crane2_*.json; a folder deeper)
    return m, info

if __name__ == "__main__":
    for scheme, h in (("zoh", 0.001), ("rim", 0.001)):
        m, info = rover_manifest(scheme, h)
        dst = f"manifests/mechanism/juno_{scheme}.json"
        json.dump(m, open(dst, "w"), indent=1)
        open(dst, "a").write("\n")
    print("juno:", info)
