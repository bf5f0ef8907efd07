"""The clip generator's options (synth.make_clips) and the command-line flags of those a training
round turns on, shared by train.py, bench_step.py and evaluate.py."""
from dataclasses import dataclass


@dataclass
class SynthOptions:
    max_objects: int = 4
    cam_speed: float = 5.0        # px/frame at 256 px (scaled with size)
    obj_speed: float = 7.0
    jump_prob: float = 0.12       # clips with 3-4x faster motion (large displacements)
    static_cam_prob: float = 0.15
    deform_prob: float = 0.5
    # articulation of the objects without sine deformation; 0 in the defaults, which define the
    # fixed generated evaluation and validation sets (train.py --bend-prob turns it on)
    bend_prob: float = 0.0
    # objects whose plane turns back and forth in depth (perspective); 0 in the defaults too
    tilt_prob: float = 0.0
    # clips whose camera jolts (hand-held shake: the whole image moves up to 36 px at 256 in 1.5-5
    # frames, smeared along the motion); 0 in the defaults too
    shake_prob: float = 0.0
    # objects with a limb: a capsule of the cut-out that swings about a joint as a layer of its
    # own, over or under the rest of the body (self-occlusion); 0 in the defaults too
    limb_prob: float = 0.0
    # clips whose background photo is flattened (blurred, and for half of them posterized into
    # flat bands): the textureless walls, skies and artwork of real scenes; 0 in the defaults too
    flat_prob: float = 0.0
    # objects wrapped round a cylinder that turns about an axis in their plane (a body turning
    # round: foreshortening towards its silhouette, its far side hidden by its near side); 0 in
    # the defaults too
    turn_prob: float = 0.0
    # objects drawn pale: their cut-out's colours blurred and pulled toward their mean (weakly
    # textured bodies over a textured scene: fur, skin, plain cloth); 0 in the defaults too
    pale_prob: float = 0.0
    # clips whose camera follows a body: it stays in the frame while the scene sweeps past (a
    # camera operator panning with a walking animal); 0 in the defaults too
    follow_prob: float = 0.0
    # objects relit while they move: bands of shading (0.55-1.8x) travelling and turning across
    # the body, its texture and tracks unchanged; 0 in the defaults too
    relight_prob: float = 0.0
    motion_blur_prob: float = 0.2
    defocus_prob: float = 0.25
    noise_max: float = 0.03
    obj_point_weight: float = 2.0  # extra sampling weight of candidate points on objects
    limb_point_weight: float = 4.0  # and on limbs, on top of that
    tq_zero_prob: float = 0.5     # fraction of tracks queried at frame 0
    # the clip's time per frame: every motion (paths, turns, deformation, drift, shake) is
    # evaluated at frame k * time_scale, so 0.4 renders the same kinds of clip 2.5x slower
    time_scale: float = 1.0


OPTION_FLAGS = (
    ("bend_prob", "fraction of the objects without sine deformation that articulate (0: rounds 1-2)"),
    ("tilt_prob", "fraction of the objects whose plane turns back and forth in depth (perspective; 0: rounds 1-3)"),
    ("shake_prob", "fraction of the clips whose camera jolts, smearing the frames (0: rounds 1-4)"),
    ("limb_prob", "fraction of the objects with a limb swinging over or under their body (0: rounds 1-6)"),
    ("flat_prob", "fraction of the clips whose background is flattened (blurred, posterized; 0: rounds 1-6)"),
    ("turn_prob", "fraction of the objects (not deformed, articulated or limbed) turning round an axis in their "
                  "plane, their far side hidden (0: rounds 1-14)"),
    ("pale_prob", "fraction of the objects drawn pale: their colours blurred and pulled toward their mean "
                  "(weak texture over a textured scene; 0: rounds 1-15)"),
    ("follow_prob", "fraction of the clips whose camera pans with a body, the scene sweeping past behind it "
                    "(0: rounds 1-15)"),
    ("relight_prob", "fraction of the objects relit while they move: bands of shading travelling across them "
                     "(0: rounds 1-16)"),
    ("time_scale", "the generator's time per frame: 0.5 renders every motion half as fast, so a clip of "
                   "2T frames spans what T frames did (1: rounds 1-13)"),
)


def add_option_args(ap):
    """The generator options a round turns on, as command-line flags (--bend-prob ...), shared by
    train.py, bench_step.py and evaluate.py."""
    for name, text in OPTION_FLAGS:
        ap.add_argument("--" + name.replace("_", "-"), type=float, default=getattr(SynthOptions, name), help=text)


def options_from_args(args):
    """SynthOptions from add_option_args' flags (a flag left out is the default option)."""
    return SynthOptions(**{name: getattr(args, name) for name, _ in OPTION_FLAGS})
