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
    json.dump(m, open(dst, "w"), indent=2)
    open(dst, "a").write("\n")

if __name__ == "__main__":
    for name in ("crane1_rim", "crane1_zoh", "crane1_zoh_vp", "crane2_rim", "crane2_zoh", "crane2_zoh_vp"):
        crane_manifest(f"manifests/{name}.json", f"manifests/mechanism/{name}.json")
