#!/usr/bin/env python3
"""Writes the kart of González et al. 2011 Sect. 4 (Figs. 11-16, Tables 2-3): the manifest
manifests/kart/kart_engine.json and the sweeps manifests/sweeps/kart_table2.json and
kart_table3.json (run from the repository root; the JSON files are committed, this script shows
where every number comes from).

The paper gives none of the kart's data. Every value below is either taken from a public source
(named beside it) or chosen, and then said so with the reason.

Axes: x forward, y up, z to the right (as the other mechanism manifests); the ground is y = 0;
the origin is on the ground below the middle of the rear axle. Bodies are placed in the design
configuration with undeflected tyres and level chassis; `static_equilibrium` lets the kart settle
on its springs and tyres before the run.

Mechanism (5 bodies and 3 rotors, 38 coordinates, 25 joint and normalization equations + the
steering input, 12 degrees of freedom):
  chassis         frame, engine, seat, bodywork and driver in one rigid body
  steering_column revolute joint to the chassis; its angle is prescribed (the steering input)
  knuckle_l/_r    cylindrical joints on vertical kingpins: they steer about the kingpin and
                  slide along it (a sliding-pillar suspension), spring-dampers along the kingpin
  tie rods        distance constraints from the column's arm to each knuckle's steering arm
                  (the closed loop chassis - column - tie rod - knuckle - chassis)
  wheel_fl/_fr    rotors on the knuckles (their spin angle a coordinate of its own, so the
                  wheels may turn 2 rad per step), Magic Formula tyres
  rear_carrier    the rear axle's bearing carrier, on a vertical prismatic joint to the chassis
                  with two spring-dampers (the rear "suspensions" of both wheels)
  rear_axle       the live rear axle with both rear wheels, a rotor on the carrier, driven
                  through the final drive (`drives`) with the reaction on the chassis (the
                  engine's mounting), two Magic Formula tyres
The paper's model has 163 natural coordinates for the same parts; ours are Euler parameters.
"""
import json, math, os

G = 9.81

# ---- Public data ------------------------------------------------------------------------------
# CIK-FIA Technical Regulations, Art. 12 (KZ2, the 125 cm3 gearbox class): minimum weight of
# kart and driver 175 kg; rear protection at least 1340 mm wide and the rear track (outside of
# the rear wheels) never narrower than it; wheelbase of 125 cm3 karts between 1010 and 1070 mm.
MASS_TOTAL = 175.0
WHEELBASE = 1.04            # chosen inside 1010-1070 mm
REAR_WHEEL_WIDTH = 0.18     # 11x7.10-5 rear tyre: 7.10 in wide
REAR_HALF_TRACK = (1.34 - REAR_WHEEL_WIDTH) / 2 + 0.0  # wheel centres at the 1340 mm outer width
FRONT_HALF_TRACK = 0.50     # chosen: front track narrower than the rear, as on every kart
R_FRONT = 0.13              # 10x4.50-5 front tyre: about 10 in (254 mm) outside diameter + tread
R_REAR = 0.14               # 11x7.10-5 rear tyre: about 11 in (280 mm) outside diameter

# ---- Chosen values (the paper gives none; reasons beside each) --------------------------------
FRONT_SHARE = 0.42          # static front axle load share: karts carry 40-44 % on the front
CG_HEIGHT = 0.27            # of kart and driver above ground: seat pan ~5 cm, driver's c.o.m. above
KINGPIN_HALF = 0.44         # kingpin 6 cm inboard of the front wheel centre
M_WHEEL_FRONT = 2.0         # 5 in magnesium rim + tyre
M_KNUCKLE = 0.8             # stub axle, kingpin boss, steering arm
M_COLUMN = 1.0
M_CARRIER = 4.0             # bearing cassettes, brake calliper, carrier tube
M_REAR_AXLE = 10.6          # 50 mm axle tube 3 kg, hubs, sprocket and disc 2 kg, two 2.8 kg wheels
M_CHASSIS = MASS_TOTAL - 2 * M_WHEEL_FRONT - 2 * M_KNUCKLE - M_COLUMN - M_CARRIER - M_REAR_AXLE

# Suspension: soft enough that the chassis pitches by the paper's few degrees under acceleration
# (Fig. 14: psi between about -2.5 and 0.5 deg). Pitch under a forward acceleration a with equal
# wheel rates k: psi ~ m a h / (k L^2) (plus the drive's reaction torque on the chassis);
# k = 6.5 kN/m gives about 1.5 deg at the 5-6 m/s^2 of the first second. Damping about 30 % of
# critical for a quarter of the sprung mass.
K_SPRING = 6500.0
C_SPRING = 320.0
# Tyres (Magic Formula, plugins/forces/magic_formula_tyre): shape factors C_x = 1.65 and
# C_y = 1.3 are the customary ones of the Magic Formula (Pacejka); mu = 1.4 for a dry racing
# slick; B_x = 12 puts the longitudinal peak at 11.7 % slip, B_y = 22 the lateral peak at
# 6.9 deg (cornering stiffness 40 F_z per rad); vertical stiffness of a kart tyre at about 1 bar.
TYRE = {"mu_x": 1.4, "mu_y": 1.4, "B_x": 12.0, "C_x": 1.65, "E_x": 0.0, "B_y": 22.0, "C_y": 1.3, "E_y": 0.0,
        "rolling_resistance": 0.015, "rolling_speed": 0.1, "slip_speed": 0.5,
        "axis": [0.0, 0.0, -1.0], "up": [0.0, 1.0, 0.0], "ground_point": [0.0, 0.0, 0.0]}
K_TYRE_FRONT, K_TYRE_REAR, C_TYRE = 6.0e4, 8.0e4, 200.0
DRAG_AREA = 0.5             # C_d A of kart and driver: C_d ~ 0.85 over ~0.6 m^2, centre of pressure 0.3 m up

# Driveline: sf_car's four gear ratios (MathWorks, "Model a Car with Automatic Transmission");
# a final drive (gearbox output to rear axle) of 0.8 keeps the engine below about 350 rad/s
# (3300 rpm) in first gear up to the first upshift at 22 m/s. The Crossley-Cook engine is a car
# engine (about 40 kW at 500 rad/s), as powerful as a 125 cm3 gearbox kart's.
GEAR_RATIOS = [2.393, 1.450, 1.000, 0.677]
FINAL_DRIVE = 0.8


def box_inertia(m, lx, ly, lz):
    return [m * (ly * ly + lz * lz) / 12, m * (lx * lx + lz * lz) / 12, m * (lx * lx + ly * ly) / 12]


def wheel_inertia(m, r, spin_factor=0.6):
    """Rim and tyre: [across, about the axle]: spin moment 0.6 m r^2 (mass mostly at the tread),
    across it 0.6 of that."""
    i_spin = spin_factor * m * r * r
    return [0.6 * i_spin, i_spin]


def static_loads():
    """Static wheel loads (N) from the front share, and the chassis c.o.m. that gives it."""
    front_unsprung = 2 * (M_WHEEL_FRONT + M_KNUCKLE)
    rear_unsprung = M_CARRIER + M_REAR_AXLE
    x_total = FRONT_SHARE * WHEELBASE
    x_column = 0.75
    x_chassis = (MASS_TOTAL * x_total - front_unsprung * WHEELBASE - M_COLUMN * x_column) / M_CHASSIS
    y_chassis = (MASS_TOTAL * CG_HEIGHT - front_unsprung * R_FRONT - rear_unsprung * R_REAR - M_COLUMN * 0.25) / M_CHASSIS
    front_wheel = FRONT_SHARE * MASS_TOTAL * G / 2
    rear_wheel = (1 - FRONT_SHARE) * MASS_TOTAL * G / 2
    front_spring = front_wheel - (M_WHEEL_FRONT + M_KNUCKLE) * G
    rear_spring = rear_wheel - rear_unsprung * G / 2
    return x_chassis, y_chassis, front_spring, rear_spring


def tyre(name, body, point, radius, k):
    p = dict(TYRE)
    p.update({"radius": radius, "vertical_stiffness": k, "vertical_damping": C_TYRE})
    return {"type": "plugin", "plugin": "magic_formula_tyre", "name": name, "body": body, "point": point, "parameters": p}


def spring(name, a, b, pa, pb, preload):
    return {"type": "spring_damper", "name": name, "bodies": [a, b], "points": [pa, pb],
            "stiffness": K_SPRING, "damping": C_SPRING, "preload": preload}


def kart_description(speed=5.0):
    """The kart in its design configuration; `speed` (m/s): an initial forward speed with the
    wheels rolling."""
    x_c, y_c, f_front, f_rear = static_loads()
    L, zf, zk, zr = WHEELBASE, FRONT_HALF_TRACK, KINGPIN_HALF, REAR_HALF_TRACK
    # Wheel centres at their static height (tyres deflected by the static wheel loads), so the
    # static equilibrium starts next to its solution; springs preloaded to the static loads.
    yf = R_FRONT - FRONT_SHARE * MASS_TOTAL * G / 2 / K_TYRE_FRONT
    yr = R_REAR - (1 - FRONT_SHARE) * MASS_TOTAL * G / 2 / K_TYRE_REAR
    v = [speed, 0.0, 0.0]
    w_front, w_rear = speed / (R_FRONT - 0.002), speed / (R_REAR - 0.002)  # rolling: r_e = r0 - delta/3
    bodies = [
        {"name": "chassis", "mass": M_CHASSIS, "position": [x_c, y_c, 0.0], "velocity": v,
         "inertia": box_inertia(M_CHASSIS, 1.5, 0.5, 1.0),
         "doc": "frame, engine, seat, bodywork and driver: a uniform box 1.5 x 0.5 x 1.0 m for the inertia"},
        {"name": "steering_column", "mass": M_COLUMN, "position": [0.70, 0.25, 0.0], "velocity": v,
         "inertia": [0.02, 0.002, 0.02]},
        {"name": "rear_carrier", "mass": M_CARRIER, "position": [0.0, yr, 0.0], "velocity": v,
         "inertia": box_inertia(M_CARRIER, 0.08, 0.08, 1.2)},
    ]
    rotors = [
        {"name": "rear_axle", "body": "rear_carrier", "point": [0.0, yr, 0.0], "axis": [0.0, 0.0, -1.0], "mass": M_REAR_AXLE,
         "inertia": [2.3, 0.08], "spin_rate": w_rear,
         "doc": "axle tube, hubs, sprocket, disc and both rear wheels: 2 x 2.8 kg at 0.58 m across, spin 0.6 m r^2 per wheel"},
    ]
    joints = [
        {"name": "steering", "type": "revolute", "bodies": ["chassis", "steering_column"], "point": [0.80, 0.16, 0.0],
         "axis": [-0.6, 0.8, 0.0]},
        {"name": "rear_slide", "type": "prismatic", "bodies": ["chassis", "rear_carrier"], "point": [0.0, yr, 0.0],
         "axis": [0.0, 1.0, 0.0]},
    ]
    forces = []
    for side, s in (("l", -1.0), ("r", 1.0)):
        k, wh = "knuckle_" + side, "wheel_f" + side
        bodies.append({"name": k, "mass": M_KNUCKLE, "position": [L, yf, s * (zk + 0.02)], "velocity": v,
                       "inertia": [0.002, 0.002, 0.002]})
        rotors.append({"name": wh, "body": k, "point": [L, yf, s * zf], "axis": [0.0, 0.0, -1.0], "mass": M_WHEEL_FRONT,
                       "inertia": wheel_inertia(M_WHEEL_FRONT, R_FRONT), "spin_rate": w_front})
        joints.append({"name": "kingpin_" + side, "type": "cylindrical", "bodies": ["chassis", k],
                       "point": [L, yf, s * zk], "axis": [0.0, 1.0, 0.0]})
        joints.append({"name": "tie_rod_" + side, "type": "distance", "bodies": ["steering_column", k],
                       "point": [0.80, 0.16, s * 0.04], "point_j": [L - 0.08, yf + 0.03, s * (zk - 0.04)]})
        forces.append(spring("front_spring_" + side, "chassis", k, [L, 0.40, s * zk], [L, yf, s * zk], f_front))
        forces.append(spring("rear_spring_" + side, "chassis", "rear_carrier", [0.0, 0.41, s * 0.45], [0.0, yr, s * 0.45], f_rear))
        forces.append(tyre("tyre_f" + side, wh, [L, yf, s * zf], R_FRONT, K_TYRE_FRONT))
        forces.append(tyre("tyre_r" + side, "rear_axle", [0.0, yr, s * zr], R_REAR, K_TYRE_REAR))
    forces.append({"type": "plugin", "plugin": "aerodynamic_drag", "name": "drag", "body": "chassis",
                   "point": [0.5, 0.30, 0.0], "parameters": {"drag_area": DRAG_AREA}})
    return {
        "gravity": [0.0, -G, 0.0],
        "static_equilibrium": True,
        "bodies": bodies,
        "rotors": rotors,
        "joints": joints,
        "forces": forces,
        "drives": [{"name": "final_drive", "rotor": "rear_axle", "reaction": "chassis", "ratio": FINAL_DRIVE,
                    "doc": "chain from the gearbox output shaft (engine on the chassis) to the rear axle"}],
        "motions": [{"name": "steering_input", "joint": "steering", "table": {"t": [0.0, 10.0], "values": [0.0, 0.0]},
                     "doc": "straight ahead: the paper's manoeuvre is a throttle law only"}],
        "sensors": [{"name": "pitch", "type": "pitch", "body": "chassis", "forward": [1.0, 0.0, 0.0], "up": [0.0, 1.0, 0.0]}],
        "points": [{"name": "cg", "body": "chassis", "point": [x_c, y_c, 0.0]}],
    }


# Throttle law (the paper's Fig. 13 is a plot without numbers): chosen so that the gearbox
# shifts between 4 and 5 s and at 8 s, as the paper reports, and the kart lifts off at the end.
# Degrees of throttle angle: the Crossley-Cook throttle passes as much air as the engine pumps
# at full load from about 20 deg, so 8-22 deg spans idle to nearly full power.
# Shift schedule (output shaft speeds, rad/s, the same at every throttle): upshifts at 128 and
# 168 rad/s (22 and 29 m/s) are where this law brings the kart at about 4.8 and 8.1 s; the
# downshifts lie 45-58 rad/s below them (hysteresis); a shift takes 0.4 s, a usual length for
# the inertia phase of an automatic gearbox.
THROTTLE = [[0.0, 8.0], [0.5, 10.0], [1.5, 16.0], [6.0, 16.0], [6.5, 22.0], [9.0, 22.0], [9.5, 0.0], [10.0, 0.0]]
UPSHIFT = [[0.0, 128.0, 168.0, 400.0], [90.0, 128.0, 168.0, 400.0]]
DOWNSHIFT = [[0.0, 70.0, 120.0, 200.0], [90.0, 70.0, 120.0, 200.0]]


def engine():
    return {
        "plugin": "engine_gearbox",
        "parameters": {
            "throttle": THROTTLE,
            "gear_ratios": GEAR_RATIOS,
            "upshift": UPSHIFT,
            "downshift": DOWNSHIFT,
            "shift_time": 0.4,
            # Converter just above coupling at t0 (speed ratio 0.92): the drive torque builds up from
            # nearly zero instead of stepping onto the kart at its first step.
            "engine_speed0": 75.0,
            # sf_car's converter is sized for its engine's torque table (up to 334 lbf ft, 453 N m);
            # K x 2.4 puts the full-throttle stall
            # speed of this 2 l engine at about 270 rad/s (2600 rpm), a usual value.
            "converter_capacity_scale": 2.4,
        },
        "step": "$h_engine",
        "integrator": "rk4",
    }


def manifest():
    return {
        "format": 1,
        "title": "Kart with engine and automatic gearbox (Gonzalez et al. 2011 Sect. 4): multirate co-simulation, "
                 "engine RK4 at h_engine, kart ali3p at h_mbs",
        "variables": {"h_engine": 1e-4, "h_mbs": 1e-2, "sync": "slowest_first", "order_engine": 0, "order_mbs": 0},
        "subsystems": {
            "engine": engine(),
            "kart": {"plugin": "mechanism", "parameters": {"description": kart_description()},
                     "step": "$h_mbs", "formulation": "ali3p"},
        },
        "connections": [
            {"from": "engine.shaft_torque", "to": "kart.drive_torque",
             "extrapolator": {"plugin": "lagrange", "parameters": {"order": "$order_engine"}}},
            {"from": "kart.drive_speed", "to": "engine.shaft_speed",
             "extrapolator": {"plugin": "lagrange", "parameters": {"order": "$order_mbs"}}},
        ],
        "coupling": {"scheme": "multirate", "synchronization": "$sync", "macro_step": "$h_mbs", "start": 0.0, "end": 10.0},
        "record": {"interval": 0.01, "variables": ["kart.pitch", "kart.cg_dot", "kart.drive_speed", "engine.engine_speed",
                                                    "engine.shaft_torque", "engine.gear", "engine.throttle",
                                                    "engine.speed_ratio", "engine.engine_torque"]},
        "output": "out/kart_engine",
    }


DEG = 180.0 / math.pi
REFERENCE = {"manifest": "../kart/kart_engine.json", "set": {"/variables/h_mbs": 1e-4},
             "columns": {"kart.pitch": "kart.pitch"}, "error_scale": DEG, "error_unit": "deg"}


def table2():
    """Table 2: slowest-first, O0 both ways, FR = h_mbs / h_engine = 1, 5, 10, 50, 100, against FR = 1."""
    return {
        "format": 1,
        "title": "Kart (Gonzalez 2011 Table 2): largest |pitch - pitch(FR = 1)| and elapsed time, slowest-first, O0 both ways",
        "manifest": "../kart/kart_engine.json",
        "reference": REFERENCE,
        "set": {"/variables/sync": "slowest_first", "/variables/order_engine": 0, "/variables/order_mbs": 0},
        "axes": [{"name": "h_mbs", "pointers": ["/variables/h_mbs"], "values": [1e-4, 5e-4, 1e-3, 5e-3, 1e-2]}],
        "step_axis": "h_mbs",
        "histories": [
            {"file": "fig14_pitch.png", "title": "Pitch angle, reference FR = 1 (Gonzalez 2011 Fig. 14)", "column": "kart.pitch",
             "scale": DEG, "ylabel": "pitch (deg, nose down positive)", "runs": ["reference"]},
            {"file": "fig15_dpitch_sf_o0.png", "title": "Pitch difference from FR = 1 at FR = 100, slowest-first, O0 (Fig. 15)",
             "column": "kart.pitch", "scale": DEG, "difference": True, "ylabel": "pitch - pitch(FR = 1) (deg)",
             "runs": [{"h_mbs": 0.01}]},
        ],
        "output": "out/sweeps/kart_table2",
    }


def table3():
    """Table 3: FR = 100, engine-side O0; slowest-first O0 and fastest-first with the MBS outputs
    extrapolated O0-O3, against FR = 1."""
    schemes = [("SF O0", "slowest_first", 0)] + [("FF O%d" % k, "fastest_first", k) for k in range(4)]
    return {
        "format": 1,
        "title": "Kart (Gonzalez 2011 Table 3): largest |pitch - pitch(FR = 1)| at FR = 100 by synchronization and MBS-side order",
        "manifest": "../kart/kart_engine.json",
        "reference": REFERENCE,
        "set": {"/variables/order_engine": 0},
        "axes": [{"name": "h_mbs", "pointers": ["/variables/h_mbs"], "values": [1e-2]},
                 {"name": "scheme", "values": [{"label": label, "set": {"/variables/sync": sync, "/variables/order_mbs": order}}
                                               for label, sync, order in schemes]}],
        "step_axis": "h_mbs",
        "histories": [
            {"file": "fig16_dpitch_ff_o1.png", "title": "Pitch difference from FR = 1 at FR = 100, fastest-first, MBS O1 (Fig. 16)",
             "column": "kart.pitch", "scale": DEG, "difference": True, "ylabel": "pitch - pitch(FR = 1) (deg)",
             "runs": [{"scheme": "FF O1"}]},
            {"file": "dpitch_schemes.png", "title": "Pitch difference from FR = 1 at FR = 100 by scheme",
             "column": "kart.pitch", "scale": DEG, "difference": True, "ylabel": "pitch - pitch(FR = 1) (deg)",
             "runs": [{"scheme": label} for label, _, _ in schemes]},
        ],
        "output": "out/sweeps/kart_table3",
    }


def write(path, doc):
    kind = "sweep" if "axes" in doc else "manifest"  # the JSON Schema editors check the file with
    doc = {"$schema": os.path.relpath(f"docs/schema/{kind}.schema.json", os.path.dirname(path)), **doc}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    os.makedirs("manifests/kart", exist_ok=True)
    write("manifests/kart/kart_engine.json", manifest())
    write("manifests/sweeps/kart_table2.json", table2())
    write("manifests/sweeps/kart_table3.json", table3())
