#include "sources/net/tls_session.h"

#include <openssl/err.h>

#include <algorithm>

namespace sluice::net {

TlsSession::TlsSession(SSL* ssl) : ssl_(ssl), in_(BIO_new(BIO_s_mem())), out_(BIO_new(BIO_s_mem())) {
  // An empty memory BIO says "try again", not end of file: the socket may give more.
  BIO_set_mem_eof_return(in_, -1);
  BIO_set_mem_eof_return(out_, -1);
  SSL_set_bio(ssl_, in_, out_);  // the SSL owns both now
  SSL_set_accept_state(ssl_);
}

TlsSession::~TlsSession() { SSL_free(ssl_); }

void TlsSession::take_output(std::string& out) {
  char chunk[16 * 1024];
  for (int n; (n = BIO_read(out_, chunk, sizeof chunk)) > 0;) out.append(chunk, static_cast<size_t>(n));
}

bool TlsSession::write(std::string_view plain, std::string& out) {
  if (state_ != State::established) return false;
  // Into a memory BIO a write never blocks: it is taken whole or fails.
  while (!plain.empty()) {
    const int chunk = static_cast<int>(std::min<size_t>(plain.size(), 1 << 20));
    if (SSL_write(ssl_, plain.data(), chunk) <= 0) {
      ERR_clear_error();
      return false;
    }
    plain.remove_prefix(static_cast<size_t>(chunk));
  }
  take_output(out);
  return true;
}

void TlsSession::close_notify(std::string& out) {
  if (state_ != State::established && state_ != State::closed) return;
  SSL_shutdown(ssl_);  // sends ours; the peer's is not waited for
  ERR_clear_error();
  take_output(out);
}

size_t TlsSession::buffered() const { return BIO_ctrl_pending(in_); }

// A memory BIO keeps the largest buffer it ever held (a 256 KiB read): once it is empty, a big
// one is replaced, so that thousands of mostly idle connections keep no such buffer each.
void TlsSession::shrink_input() {
  constexpr size_t kKeep = 32 * 1024;
  BUF_MEM* memory = nullptr;
  BIO_get_mem_ptr(in_, &memory);
  if (!memory || memory->max <= kKeep || BIO_ctrl_pending(in_) != 0) return;
  BIO* fresh = BIO_new(BIO_s_mem());
  if (!fresh) return;
  BIO_set_mem_eof_return(fresh, -1);
  SSL_set0_rbio(ssl_, fresh);  // frees the old one
  in_ = fresh;
}

void TlsSession::fail(TlsFailure why) {
  state_ = State::failed;
  failure_ = why;
}

TlsSession::State TlsSession::feed(std::string_view cipher, const std::function<void(std::string_view)>& plain,
                                   std::string& out, std::vector<char>& scratch) {
  if (!cipher.empty() && (state_ == State::handshaking || state_ == State::established))
    BIO_write(in_, cipher.data(), static_cast<int>(cipher.size()));
  if (state_ == State::handshaking) {
    ERR_clear_error();
    const int rc = SSL_do_handshake(ssl_);
    if (rc == 1) {
      state_ = State::established;
      take_output(out);
      return state_;  // the caller admits the peer before any data is read
    }
    const int error = SSL_get_error(ssl_, rc);
    if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) fail(TlsContext::classify_failure(ssl_));
    take_output(out);  // the next handshake message, or the alert that refuses
    shrink_input();    // a handshake waiting for its client keeps no large read buffer either
    return state_;
  }
  if (state_ != State::established) return state_;
  while (true) {
    ERR_clear_error();
    const int n = SSL_read(ssl_, scratch.data(), static_cast<int>(scratch.size()));
    if (n > 0) {
      plain(std::string_view(scratch.data(), static_cast<size_t>(n)));
      continue;
    }
    const int error = SSL_get_error(ssl_, n);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) break;
    if (error == SSL_ERROR_ZERO_RETURN)
      state_ = State::closed;
    else
      fail(TlsFailure::protocol);  // a broken record, an alert from the client
    ERR_clear_error();
    break;
  }
  take_output(out);  // key updates, alerts
  shrink_input();
  return state_;
}

void TlsSession::refuse(TlsFailure why, std::string& out) {
  fail(why);
  SSL_shutdown(ssl_);  // close_notify: the handshake is over, there is no alert for "not allowed"
  take_output(out);
}

std::string TlsSession::peer_subject() const { return subject_of(SSL_get0_peer_certificate(ssl_)); }

}  // namespace sluice::net
