#include "edgetap/ladder/governor_peers.hpp"

namespace edgetap::pipeline {

bool GovernorPeers::claim_change(Ticket& ticket, double now_s) {
  std::lock_guard lock(mutex_);
  std::erase_if(waiting_, [&](const auto& entry) {
    return entry.first != ticket && now_s - entry.second > kTicketLifetimeS;
  });
  if (ticket == 0 || !waiting_.contains(ticket)) ticket = next_ticket_++;
  waiting_[ticket] = now_s;
  if (now_s - last_change_s_ < kChangeSpacingS || waiting_.begin()->first != ticket) return false;
  waiting_.erase(ticket);
  ticket = 0;
  last_change_s_ = now_s;
  changes_.fetch_add(1, std::memory_order_release);
  return true;
}

void GovernorPeers::withdraw(Ticket& ticket) {
  if (ticket == 0) return;
  std::lock_guard lock(mutex_);
  waiting_.erase(ticket);
  ticket = 0;
}

}  // namespace edgetap::pipeline
