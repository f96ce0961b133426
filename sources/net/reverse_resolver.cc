#include "sources/net/reverse_resolver.h"

#include <netdb.h>
#include <netinet/in.h>

#include <thread>
#include <utility>

namespace sluice::net {

void ReverseResolver::Inbox::post(Answer answer) {
  std::lock_guard lock(mutex_);
  if (!async_) return;
  answers_.push_back(std::move(answer));
  if (answers_.size() == 1) uv_async_send(async_);  // one wake-up serves all posted so far
}

std::vector<ReverseResolver::Answer> ReverseResolver::Inbox::take() {
  std::lock_guard lock(mutex_);
  return std::exchange(answers_, {});
}

void ReverseResolver::Inbox::detach() {
  std::lock_guard lock(mutex_);
  async_ = nullptr;
  answers_.clear();
}

ReverseResolver::ReverseResolver(int threads) : state_(std::make_shared<State>()) {
  for (int i = 0; i < threads; ++i) std::thread(&ReverseResolver::serve, state_).detach();
}

ReverseResolver::~ReverseResolver() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
    state_->queue.clear();
  }
  state_->wake.notify_all();
}

void ReverseResolver::lookup(const std::shared_ptr<Inbox>& inbox, uint64_t id, const sockaddr_storage& address) {
  {
    std::lock_guard lock(state_->mutex);
    state_->queue.push_back({inbox, id, address});
  }
  state_->wake.notify_one();
}

std::vector<uint64_t> ReverseResolver::cancel_queued(const Inbox* inbox) {
  std::vector<uint64_t> ids;
  std::lock_guard lock(state_->mutex);
  for (auto it = state_->queue.begin(); it != state_->queue.end();) {
    if (it->inbox.get() != inbox) {
      ++it;
      continue;
    }
    ids.push_back(it->id);
    it = state_->queue.erase(it);
  }
  return ids;
}

void ReverseResolver::serve(std::shared_ptr<State> state) {
  while (true) {
    Request request;
    {
      std::unique_lock lock(state->mutex);
      state->wake.wait(lock, [&] { return state->stopping || !state->queue.empty(); });
      if (state->stopping) return;
      request = std::move(state->queue.front());
      state->queue.pop_front();
    }
    char host[NI_MAXHOST];
    const socklen_t length =
        request.address.ss_family == AF_INET ? sizeof(sockaddr_in) : static_cast<socklen_t>(sizeof(sockaddr_in6));
    const bool found = ::getnameinfo(reinterpret_cast<const sockaddr*>(&request.address), length, host, sizeof host,
                                     nullptr, 0, NI_NAMEREQD) == 0;
    request.inbox->post({request.id, found ? std::string(host).substr(0, 255) : std::string()});
  }
}

}  // namespace sluice::net
