// Stopping a run: SIGINT or SIGTERM sets a flag that train_mlp reads between steps; the step under
// way finishes, the checkpoint is saved (with --save, or a resumed run's own), the command that
// resumes it is printed, and the exit status is 130 (SIGINT) or 143 (SIGTERM). A second signal
// stops at once (the checkpoint is then the previous save, whole). A run resumed mid-epoch takes
// the rest of that epoch's batches, in the same order, so it ends where an uninterrupted one
// would, bit for bit.
#pragma once

#include <string>

#include "apps/train_mlp/options.h"

// Installs the handlers: the first signal sets the flag; a second one stops the process at once,
// saying whether the stop's checkpoint was complete. `program` (argv[0]) starts the resume command.
// at_once (--eval, which writes nothing): the first signal stops the process at once, saying so,
// with exit status 130 or 143.
void install_stop_handlers(const char* program, bool at_once = false);

// The signal that asked the run to stop (SIGINT or SIGTERM), or 0.
int stop_signal();

// Called once the stop's checkpoint is complete: a second signal from then on says so, rather
// than that no save was made.
void note_stop_checkpoint_complete();

// Thrown when a signal stopped the run (after its checkpoint was saved): exit 128 + signal.
struct Stopped {
  int signal;
};

// The command that continues this run from its checkpoint (o.save): the checkpoint records the
// model and the run's settings; what it does not record (where the data is, the device, the
// reports) is repeated as given.
std::string resume_command(const Options& o);
