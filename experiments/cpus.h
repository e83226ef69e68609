#pragma once
/// --cpus: which CPUs a program's threads run on. The virtual CPUs of a cloud machine need not run
/// at one speed (on the 2-core development machine one ran a fixed loop 1.8x slower than the other
/// for minutes at a time), and the OS moves a lane's thread between them, so on the CPU device a
/// run's speed depends on where its threads landed. Pinning the profile and the runs to the same
/// CPUs makes them measure the same device.
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace salus::experiments {

/// The CPUs this thread may run on (its affinity mask), ascending.
std::vector<int> allowed_cpus();

/// "0", "2-3", "0,2-3" -> the CPUs, ascending and without repeats. Throws core::InputError
/// "--cpus: what" for anything else.
std::vector<int> parse_cpu_list(const std::string& text);

/// The CPUs as a list "0-1,3" (the form parse_cpu_list reads).
std::string cpu_list_text(const std::vector<int>& cpus);

/// Restricts this thread, and so every thread and program it starts afterwards, to `cpus`. Throws
/// core::InputError naming the CPUs this process may use when one of them is not among them.
void pin_to_cpus(const std::vector<int>& cpus);

/// Adds --cpus LIST to `desc`; `value` stays empty when it is not given. `default_text` says
/// what happens then.
void add_cpus_option(boost::program_options::options_description& desc, std::string& value,
                     const std::string& default_text = "where the OS places them");

/// Pins to the --cpus value (nothing when it is empty); call before any thread is started.
void apply_cpus_option(const std::string& value);

}  // namespace salus::experiments
