//! Integration tests of askuser-rig: the tool called the way rig calls it (agent runs with the hook
//! are tested in `examples/rig-agent`).

mod tool;
