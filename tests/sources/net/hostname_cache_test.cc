#include <catch2/catch.hpp>

#include "sources/net/hostname_cache.h"

using sluice::net::HostnameCache;

TEST_CASE("the hostname cache answers until the ttl is over", "[source][dns]") {
  HostnameCache cache(1000);
  CHECK_FALSE(cache.find("192.0.2.7", 0));
  cache.store("192.0.2.7", "web01", 5000);
  CHECK(cache.find("192.0.2.7", 5999) == "web01");
  CHECK_FALSE(cache.find("192.0.2.7", 6000));
  CHECK_FALSE(cache.find("192.0.2.8", 5000));
  cache.store("192.0.2.7", "web02", 6000);  // a new answer replaces the old one
  CHECK(cache.find("192.0.2.7", 6500) == "web02");
}

TEST_CASE("the hostname cache stays bounded: full, it starts over", "[source][dns]") {
  HostnameCache cache(60'000);
  for (size_t i = 0; i < HostnameCache::kMaxEntries; ++i) cache.store("10.0." + std::to_string(i), "h", 0);
  CHECK(cache.size() == HostnameCache::kMaxEntries);
  cache.store("10.0.0", "again", 0);  // known: replaced, nothing dropped
  CHECK(cache.size() == HostnameCache::kMaxEntries);
  cache.store("192.0.2.1", "new", 0);
  CHECK(cache.size() == 1);
  CHECK(cache.find("192.0.2.1", 1) == "new");
}
