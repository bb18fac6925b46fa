#include "apps/train_mlp/stop.h"

#include <signal.h>
#include <unistd.h>

#include <csignal>

#include "base/shell_quoted.h"

using gemm_mlp::shell_quoted;

namespace {

volatile std::sig_atomic_t received = 0;    // set by the handler, read between steps
volatile std::sig_atomic_t stop_saved = 0;  // the stop's checkpoint is complete
const char* program_name = "train_mlp";

// --eval: nothing to save, so the first signal ends the process (write and _exit are safe here).
extern "C" void on_stop_signal_at_once(int sig) {
  static const char interrupted[] =
      "\ntrain_mlp: stopped by SIGINT; the evaluation did not finish (nothing is written)\n";
  static const char terminated[] =
      "\ntrain_mlp: stopped by SIGTERM; the evaluation did not finish (nothing is written)\n";
  const char* text = sig == SIGINT ? interrupted : terminated;
  const size_t size = sig == SIGINT ? sizeof interrupted : sizeof terminated;
  const ssize_t ignored = ::write(STDERR_FILENO, text, size - 1);
  (void)ignored;
  ::_exit(128 + sig);
}

extern "C" void on_stop_signal(int sig) {
  if (received != 0) {  // the second: stop at once, and say what is saved
    static const char at_once[] =
        "\ntrain_mlp: second signal: stopped at once; no save was made (the last complete save, "
        "if any, stays whole)\n";
    static const char after_save[] =
        "\ntrain_mlp: second signal: stopped at once, after this stop's checkpoint was complete "
        "(resume from it)\n";
    const char* text = stop_saved ? after_save : at_once;
    const size_t size = stop_saved ? sizeof after_save : sizeof at_once;
    const ssize_t ignored = ::write(STDERR_FILENO, text, size - 1);
    (void)ignored;
    ::signal(sig, SIG_DFL);
    ::raise(sig);  // delivered when this handler returns: the process ends by the signal
    return;
  }
  received = sig;
  static const char message[] =
      "\ntrain_mlp: stopping after this step (again to stop at once; the last save stays whole)\n";
  const ssize_t ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
  (void)ignored;
}

}  // namespace

void install_stop_handlers(const char* program, bool at_once) {
  program_name = program;
  struct sigaction action {};
  action.sa_handler = at_once ? on_stop_signal_at_once : on_stop_signal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int stop_signal() { return received; }

void note_stop_checkpoint_complete() { stop_saved = 1; }

std::string resume_command(const Options& o) {
  std::string command = shell_quoted(program_name) + " --resume " + shell_quoted(o.save);
  const auto repeat = [&](const char* flag, const std::string& value) {
    if (o.given.count(flag)) command += std::string(" ") + flag + " " + shell_quoted(value);
  };
  repeat("--epochs", std::to_string(o.epochs));
  repeat("--data-dir", o.data_dir);
  repeat("--device", o.device);
  repeat("--history", o.history);
  repeat("--results", o.results);
  repeat("--log-interval", std::to_string(o.log_interval));
  repeat("--log-seconds", std::to_string(o.log_seconds));
  if (o.no_graph) command += " --no-graph";
  if (o.serial_step) command += " --serial-step";
  if (o.no_dependent_launch) command += " --no-dependent-launch";
  if (o.branched_no_graph) command += " --branched-no-graph";
  return command;
}
