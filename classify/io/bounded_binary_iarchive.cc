#include "classify/io/bounded_binary_iarchive.h"

// The archive's class templates are compiled here once, as Boost compiles
// binary_iarchive in its own library.
#include <boost/archive/detail/archive_serializer_map.hpp>
#include <boost/archive/impl/archive_serializer_map.ipp>
#include <boost/archive/impl/basic_binary_iarchive.ipp>
#include <boost/archive/impl/basic_binary_iprimitive.ipp>

namespace boost::archive {

template class detail::archive_serializer_map<autocat::internal::BoundedBinaryIarchive>;
template class basic_binary_iprimitive<autocat::internal::BoundedBinaryIarchive, char,
                                       std::char_traits<char>>;
template class basic_binary_iarchive<autocat::internal::BoundedBinaryIarchive>;
template class binary_iarchive_impl<autocat::internal::BoundedBinaryIarchive, char,
                                    std::char_traits<char>>;

}  // namespace boost::archive
