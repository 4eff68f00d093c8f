// The translation unit that builds the SDK's precompiled header (sdk/CMakeLists.txt).
