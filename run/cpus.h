#pragma once
/// --cpus: which CPUs a program's threads run on. The virtual CPUs of a cloud machine need not run
/// at one speed (on the 2-core development machine one ran a fixed loop 1.8x slower than the other
/// for minutes at a time), and the OS moves a lane's thread between them, so on the CPU device a
/// run's speed depends on where its threads landed. Pinning the profile and the runs to the same
/// CPUs makes them measure the same device.
#include <string>
#include <vector>

namespace salus::traces {
class Catalog;
}

namespace salus::run {

/// The CPUs this thread may run on (its affinity mask), ascending.
std::vector<int> allowed_cpus();

/// "0", "2-3", "0,2-3" -> the CPUs, ascending and without repeats; "all" -> allowed_cpus(). Throws
/// core::InputError "--cpus: what" for anything else.
std::vector<int> parse_cpu_list(const std::string& text);

/// The CPUs as a list "0-1,3" (the form parse_cpu_list reads).
std::string cpu_list_text(const std::vector<int>& cpus);

/// Restricts this thread, and so every thread and program it starts afterwards, to `cpus`. Throws
/// core::InputError naming the CPUs this process may use when one of them is not among them.
void pin_to_cpus(const std::vector<int>& cpus);

/// Pins to the --cpus value (nothing when it is empty or "all"); call before any thread is started.
void apply_cpus_option(const std::string& value);

/// The CPUs that a catalog's figures measured on the cpu device were measured on, as salus-profile
/// records them in each entry's provenance ("measured on cpu (math fp32, CPUs 0) by ...").
struct CatalogCpus {
  std::vector<std::vector<int>> lists;  ///< the distinct CPU lists named, in the order of the catalog's names
  std::vector<std::string> unrecorded;  ///< workloads measured on the cpu device whose provenance names none
  bool measured_on_cpu() const { return !lists.empty() || !unrecorded.empty(); }
  /// The one list every cpu-device entry names; nullptr when they name several, or some none.
  const std::vector<int>* single() const { return lists.size() == 1 && unrecorded.empty() ? &lists.front() : nullptr; }
};
CatalogCpus catalog_cpus(const traces::Catalog& catalog);

/// The CPU list recorded in a provenance text ("... CPUs 0-1) ..."); empty when it names none.
std::vector<int> provenance_cpus(const std::string& source);

/// Pins salus-run or salus-profile (`program`) for `device` as --cpus `value` says, before any
/// thread starts, and returns the note that says where it runs and why ("" when there is nothing
/// to say). On the cpu device a run's figures depend on how many CPUs its lanes share (two lanes
/// on two cores run side by side, on one they take turns), so:
///   - no --cpus: one CPU, the first this process may use; salus-run takes the CPUs `catalog`'s
///     cpu-device figures were measured on instead, where it names one list this process may use;
///   - --cpus LIST: LIST; --cpus all: every CPU this process may use, where the OS places threads;
///     either refused (core::InputError, exit 2, naming the fix) when it puts the lanes on another
///     number of CPUs than `catalog`'s cpu-device figures were measured on.
/// Other devices: pinned only to an explicit LIST. `catalog` is null for salus-profile.
std::string pin_for_device(const std::string& program, const std::string& value, const std::string& device,
                           const traces::Catalog* catalog);

/// salus-sim's note on a catalog whose cpu-device figures do not describe lanes sharing one CPU:
/// measured on several CPUs, on different numbers of CPUs, or on CPUs not recorded ("" otherwise).
std::string catalog_cpus_note(const traces::Catalog& catalog);

}  // namespace salus::run
